/**
 * notify-mcp as a library: build the server yourself (e.g. to embed it, to test a host
 * against it, or to add a channel of your own: `loadConfig(env, [...CHANNELS, mine])`, where
 * `mine` is a defineChannel module). The union machinery is `notify-mcp/union`, the
 * reconciler `notify-mcp/bundling`.
 */
export { createApp, type App, type AppOverrides } from './app.js';
export { createServer, type Connection, type Era } from './mcp/server.js';
export { serveStdio } from './transports/stdio/stdio.js';
export { serveHttp } from './transports/http/listener.js';
export { loadConfig, ConfigError, PROFILES, type Config, type Profile } from './config/config.js';
export { createLogger, silentLogger, type Logger } from './core/log.js';
export { CHANNELS, type Notification, type Via } from './channels/registry.js';
export { defineChannel, idempotencyKey } from './channels/channel.js';
export type {
  Branch,
  CallOf,
  CallOfChannel,
  Channel,
  ChannelModule,
  ConfiguredChannel,
  ConnectedChannel,
  ProviderContext,
  ResultMeta,
} from './channels/channel.js';
export type { ChannelSettings, LiveSettings } from './channels/settings.js';
export { notificationUnion, notificationDef, SEND_TOOL, channelToolName } from './channels/send-union.js';
export { countSegments, type SegmentCount, type SmsEncoding } from './channels/sms/segments.js';
export type { RecipientMatcher } from './policy/matcher.js';
export { NotifyError, ERROR_CODES, type ErrorCode, type ToolErrorBody } from './core/errors.js';
export type { Store } from './store/types.js';
export type { Provider, ProviderReceipt, SendContext } from './providers/types.js';
export { ProviderRejectedError, ProviderTransientError, DeliveryUnknownError, RecipientOptedOutError } from './providers/errors.js';
export { VERSION } from './core/version.js';
