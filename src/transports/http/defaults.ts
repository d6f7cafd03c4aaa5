/** HTTP defaults, in a module of their own so the CLI can name them without loading the HTTP stack. */
export const DEFAULT_HTTP_PORT = 8787;
export const DEFAULT_HTTP_HOST = '127.0.0.1';
