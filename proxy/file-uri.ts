/**
 * A `file:` URI as one absolute path, or why it is refused. Parsers disagree on URIs: the WHATWG
 * parser (Node's `fileURLToPath`) collapses `..` and `%2e%2e` as text and drops tabs and a host,
 * Python's `urllib` keeps dot segments for the operating system to follow (through links) and
 * ignores the host. So only a URI that every reader turns into the same path is accepted: no dot
 * segments (plain or encoded), no encoded `/` or `\`, no backslash, no host but `localhost`, no
 * query or fragment, no raw space or control character, no double encoding.
 */

/** The path a URI names, or the problem that keeps it from naming exactly one. */
export type FileUriResult = { path: string } | { problem: string };

import { trimWide } from './wide-space.js';

const FILE_SCHEME = /^file:/i;
// eslint-disable-next-line no-control-regex -- raw controls and spaces are what this looks for
const RAW_SPACE_OR_CONTROL = /[\u0000-\u0020\u007f-\u009f]/;
/** A `%` not followed by two hex digits. */
const BAD_ESCAPE = /%(?![0-9a-fA-F]{2})/;
/** What `%2f`, `%5c` and `%00` (any case) decode to: a separator or the end of a C string. */
const ENCODED_SEPARATOR = /%(2f|5c|00)/i;
/** A decoded path that still holds an escape: a second decoding would read another path. */
const STILL_ENCODED = /%[0-9a-fA-F]{2}/;
/** A first segment WHATWG reads as a Windows drive (`C|` becomes `C:`). */
const DRIVE_WITH_BAR = /^\/[A-Za-z]\|(\/|$)/;

/**
 * What URL parsers drop before they read a scheme: leading C0 controls and spaces (WHATWG, so
 * Node's `new URL` and `fileURLToPath`, and Python's `urllib`), and every tab, CR and LF anywhere.
 */
// eslint-disable-next-line no-control-regex -- controls are what this drops
const DROPPED_BEFORE_SCHEME = /^[\u0000-\u0020]+/;
const DROPPED_ANYWHERE = /[\t\r\n]/g;

/**
 * Whether `value` is a `file:` URI (the scheme is case-insensitive) to some URL parser. With a
 * leading space (`" file:///x"`) or a tab in the scheme (`"fi\tle:///x"`) it is `file:///x` to
 * Node and Python alike, so it is a file URI here too, which `fileUriPath` then refuses for its
 * raw control characters (test/hardening/proxy-uris.test.ts).
 */
export function isFileUri(value: string): boolean {
  return FILE_SCHEME.test(value) || FILE_SCHEME.test(asParsersRead(value));
}

/**
 * `value` as URL parsers read it before its scheme: what they drop, dropped; and what Python's
 * `urllib` unwraps (`urlopen` and `url2pathname` readers call `unwrap`): `<…>` around it, then a
 * `URL:` before it (RFC 1738's wrapper), each with the white space inside.
 */
export function asParsersRead(value: string): string {
  const read = value.replace(DROPPED_ANYWHERE, '').replace(DROPPED_BEFORE_SCHEME, '');
  // Trimmed as Python's str.strip() trims, which unwrap uses (U+0085 before `file:` too).
  let unwrapped = trimWide(read);
  if (unwrapped.startsWith('<') && unwrapped.endsWith('>')) {
    unwrapped = trimWide(unwrapped.slice(1, -1));
  }
  if (unwrapped.startsWith('URL:')) unwrapped = trimWide(unwrapped.slice(4));
  return unwrapped;
}

/** The one absolute path `uri` names, or why the proxy will not read it as one. */
export function fileUriPath(uri: string): FileUriResult {
  if (!isFileUri(uri)) return { problem: 'is not a file: URI' };
  if (!FILE_SCHEME.test(uri) && !RAW_SPACE_OR_CONTROL.test(uri)) {
    return {
      problem:
        'is wrapped (in <...>, or after URL:), which some URL readers unwrap and others do not; give the URI alone',
    };
  }
  if (RAW_SPACE_OR_CONTROL.test(uri)) {
    return {
      problem:
        'has a raw space or control character, which URI parsers drop or keep differently; percent-encode it',
    };
  }
  let rest = uri.slice('file:'.length);
  if (rest.includes('\\')) {
    return { problem: 'has a backslash, which some URI parsers read as /' };
  }
  if (/[?#]/.test(rest)) {
    return { problem: 'has a query or fragment; a file URI names a path only' };
  }
  if (rest.startsWith('//')) {
    const end = rest.indexOf('/', 2);
    const host = end === -1 ? rest.slice(2) : rest.slice(2, end);
    if (host !== '' && host.toLowerCase() !== 'localhost') {
      return {
        problem: `names the host ${JSON.stringify(host)}; only local files (file:///… or file://localhost/…) are checked`,
      };
    }
    rest = end === -1 ? '' : rest.slice(end);
  }
  if (!rest.startsWith('/')) return { problem: 'has no absolute path' };
  if (DRIVE_WITH_BAR.test(rest)) {
    return { problem: 'starts with a drive letter and |, which some parsers read as C:' };
  }
  if (BAD_ESCAPE.test(rest)) return { problem: 'has a % that is not followed by two hex digits' };
  if (ENCODED_SEPARATOR.test(rest)) {
    return {
      problem: 'percent-encodes /, \\ or NUL; one parser splits there, another does not',
    };
  }
  let path: string;
  try {
    path = decodeURIComponent(rest);
  } catch {
    return { problem: 'percent-encodes bytes that are not UTF-8' };
  }
  if (path.split('/').some((s) => s === '.' || s === '..')) {
    return {
      problem:
        'has a dot segment (., .., %2e or %2e%2e); the server’s system would follow links before ..',
    };
  }
  if (STILL_ENCODED.test(path)) {
    return { problem: 'is percent-encoded twice; decoded again it names another path' };
  }
  // Linux reads a run of slashes as one; this is the form the daemon is asked about.
  return { path: path.replace(/\/{2,}/g, '/') };
}
