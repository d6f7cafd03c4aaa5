/** Kept in step with package.json by hand (the build's rootDir is src). */
export const VERSION = '0.1.0';
