/** The HTTP lines of `notify-mcp doctor`: tokens, the bind address and the names it answers to agree. */
import type { Config } from '../../config/config.js';
import { DEFAULT_HTTP_HOST } from '../../transports/http/defaults.js';
import { isLoopbackHost } from '../../transports/http/host-check.js';
import { plural } from '../../core/words.js';
import { fail, pass, type Check } from '../../core/check.js';

export function httpChecks(config: Config, host = DEFAULT_HTTP_HOST): Check[] {
  const { tokens, readAuth, allowedHosts } = config.http;
  const checks: Check[] = [];
  if (tokens.length) {
    const clients = [...new Set(tokens.map((t) => t.client))];
    checks.push(
      pass(
        'http tokens',
        `${plural(tokens.length, 'token')} for ${plural(clients.length, 'client')} (${clients.join(', ')}); /mcp needs a bearer token`,
      ),
    );
  } else if (!isLoopbackHost(host)) {
    checks.push(
      fail(
        'http tokens',
        `none set, and --http would bind ${host}: the server refuses to start`,
        'set NOTIFY_HTTP_TOKENS=client:token (tokens of 16+ characters from [A-Za-z0-9._~-]), or bind 127.0.0.1',
      ),
    );
  } else {
    checks.push(pass('http tokens', `none set: --http serves ${host} (loopback) only, without authentication`));
  }
  if (readAuth && !tokens.length) {
    checks.push(
      fail(
        'http read auth',
        'NOTIFY_READ_AUTH=1 but no tokens are set: /healthz, /metrics and /banners refuse every request',
        'set NOTIFY_HTTP_TOKENS, or unset NOTIFY_READ_AUTH',
      ),
    );
  }
  const bound = isLoopbackHost(host) ? `loopback names and ${host}` : host;
  const extra = allowedHosts.length
    ? `, and ${allowedHosts.join(', ')} (NOTIFY_HTTP_ALLOWED_HOSTS)`
    : '; behind a proxy with a public name, list it in NOTIFY_HTTP_ALLOWED_HOSTS';
  checks.push(pass('http hosts', `answers to ${bound}${extra}`));
  return checks;
}
