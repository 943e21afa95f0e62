/**
 * A catalog's connection string as node-postgres reads it, and as we show it: never with its password,
 * whether that is in the user-info (`postgres://user:secret@host/db`) or a query parameter
 * (`?password=secret`, which pg-connection-string takes as the password too).
 */

/** `scheme://`: where the authority, and so the user-info, starts. */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/**
 * Query parameters whose value is a secret, whatever their case: pg-connection-string reads `password`
 * (the only secret it takes from the query; `sslkey` and `sslcert` are file paths), and libpq's
 * `sslpassword` may be there for other clients.
 */
const SECRET_PARAMETER = /password/i;

/**
 * `postgres://user:secret@host/db?password=secret` → `postgres://user:***@host/db?password=***`, for
 * messages and the lock files' command lines; the rest as typed. The user-info runs from the first `:`
 * after `//` to the last `@`, so a password with an unencoded `/`, `?`, `#`, `:` or `@` (a string that is
 * no URL, or one that parses otherwise) is masked whole.
 */
export function redactCatalogUrl(url: string): string {
  const from = SCHEME.exec(url)?.[0].length ?? 0;
  const end = userInfoEnd(url, from);
  const colon = url.indexOf(':', from);
  const masked = colon >= 0 && colon + 1 < end ? `${url.slice(0, colon + 1)}***${url.slice(end)}` : url;
  return masked.replace(/([?&])([^?&=]*)=[^&]*/g, (parameter, separator: string, name: string) =>
    SECRET_PARAMETER.test(decodeName(name)) ? `${separator}${name}=***` : parameter,
  );
}

/**
 * Where the user-info ends: the last `@`. Only a URL whose every `@` past its query's `?` sits in a
 * parameter's value (`?user=me@corp`) ends it before the query. An `@` in the path or fragment means a
 * password with a `/` or `#` was split there (`postgres://u:12/b@host` parses, as host `u`, port 12).
 */
function userInfoEnd(url: string, from: number): number {
  const last = url.lastIndexOf('@');
  const query = url.indexOf('?', from);
  if (query < 0 || last < query || !URL.canParse(url)) return last;
  const inValues = url
    .slice(query + 1)
    .split(/[&#]/)
    .every(
      (part) => !part.includes('@') || (part.indexOf('=') >= 0 && part.indexOf('=') < part.indexOf('@')),
    );
  return inValues ? url.lastIndexOf('@', query) : last;
}

function decodeName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return name;
  }
}

/**
 * Whether node-postgres can read `url` (pg-connection-string's parse: spaces and stray `%` encoded
 * first, a URL with an empty host such as `postgres://user@/db?host=/run/postgresql` read with a
 * stand-in host). Not: one whose port is no number, or whose password has an unencoded `/`, `?` or `#`.
 */
export function isReadableCatalogUrl(url: string): boolean {
  let text = url;
  if (/ |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(text)) {
    try {
      text = encodeURI(text).replace(/%25(\d\d)/g, '%$1');
    } catch {
      return false;
    }
  }
  return URL.canParse(text) || URL.canParse(text.replace('@/', '@___DUMMY___/'));
}
