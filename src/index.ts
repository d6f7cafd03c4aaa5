/**
 * notify-mcp as a library: build the server yourself (e.g. to embed it or to test a host
 * against it). The union machinery is `notify-mcp/union`, the reconciler
 * `notify-mcp/bundling`.
 */
export { createApp, type App, type AppOverrides } from './app.js';
export { createServer, type Connection, type Era } from './server.js';
export { serveStdio } from './transports/stdio.js';
export { serveHttp } from './transports/http.js';
export { loadConfig, ConfigError, PROFILES, type Config, type Profile } from './config.js';
export { createLogger, silentLogger, type Logger } from './log.js';
export { notificationUnion, notificationDef, type Notification } from './notification/union.js';
export { countSegments, type SegmentCount, type SmsEncoding } from './notification/sms-segments.js';
export { NotifyError, ERROR_CODES, type ErrorCode, type ToolErrorBody } from './errors.js';
export type { Store } from './store/types.js';
export type { Provider } from './providers/types.js';
export { VERSION } from './version.js';
