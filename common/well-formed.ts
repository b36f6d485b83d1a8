/**
 * UTF-16 surrogates without their pair: no file has such a name (Node opens U+FFFD in its place),
 * so a path holding one is refused, and a label holding one is shown with U+FFFD.
 */
const LONE_SURROGATES = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Whether `text` holds a surrogate without its pair. */
export const hasLoneSurrogate = (text: string): boolean => text.search(LONE_SURROGATES) !== -1;

/** `text` with each surrogate without its pair replaced by U+FFFD. */
export const wellFormed = (text: string): string => text.replace(LONE_SURROGATES, '\ufffd');

/** The first `n` UTF-16 units of `text`, less half of a pair at the end. */
export function cutWhole(text: string, n: number): string {
  const cut = text.slice(0, n);
  return /[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut;
}
