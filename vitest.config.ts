// The configuration is test/vitest.config.ts, beside the test tools' install (test/package.json).
export { default } from './test/vitest.config.ts';
