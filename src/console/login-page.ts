/** The sign-in form: an operator pastes their token once (NOTIFY_HTTP_TOKENS, named in NOTIFY_OPERATOR_CLIENTS). */
import { html, type Html } from './html.js';

export function loginBody(loginCsrf: string, next: string): Html {
  return html`<form method="post" action="/console/login" class="card">
    <input type="hidden" name="csrf" value="${loginCsrf}">
    <input type="hidden" name="next" value="${next}">
    <label for="token">Operator token</label>
    <input id="token" name="token" type="password" required autocomplete="current-password" spellcheck="false">
    <p class="muted">A token of NOTIFY_HTTP_TOKENS whose client is in NOTIFY_OPERATOR_CLIENTS. It is checked once; the session lasts 8 hours.</p>
    <div class="actions"><button type="submit">Sign in</button></div>
  </form>`;
}
