/**
 * What the proxy's key scan (`proxy/ambiguous-keys.ts`, run on every host line and on the envelope
 * of every server request) costs beside `JSON.parse` of the same line, which every line pays
 * anyway: lines of long keys in several scripts and spellings, the shapes an agent can send to
 * make the scan the expensive part. Each figure is the fastest of `ROUNDS` runs, the two measured
 * alternately so that both see the same machine. Target: the scan ≤ 4 × `JSON.parse` on every line (it was 10 to 60 × for long non-ASCII keys).
 */
import { ambiguousKeys } from '../proxy/ambiguous-keys.js';
import { report } from './common.js';

const ROUNDS = Number(process.env.ROUNDS ?? 15);

/** A `tools/call` line whose arguments have `count` keys, each `unit` × `repeat` and a number. */
function line(unit: string, repeat: number, count: number): string {
  const members: string[] = [];
  const key = unit.repeat(repeat);
  for (let i = 0; i < count; i++) members.push(`"${key}${i}":1`);
  return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{${members.join(',')}}}}`;
}

const LINES: [string, string][] = [
  ['ASCII keys of 1,000 characters', line('a', 1000, 1000)],
  ['escaped ASCII (\\u0061 × 1,000)', line('\\u0061', 1000, 1000)],
  ['Latin é × 1,000', line('é', 1000, 1000)],
  ['escaped é (\\u00e9 × 1,000)', line('\\u00e9', 1000, 1000)],
  ['CJK 一 × 1,000', line('一', 1000, 1000)],
  // Its low byte is `"`: a two-byte search for the quote stops at every one.
  ['CJK 丢 (U+4E22) × 1,000', line('丢', 1000, 1000)],
  ['Greek Σσ × 500', line('Σσ', 500, 1000)],
  ['astral 😀 × 1,000', line('😀', 1000, 1000)],
  ['Kelvin sign K × 1,000', line('K', 1000, 1000)],
  ['escaped quotes (\\") × 1,000', line('\\"', 1000, 1000)],
  ['100,000 short keys é0 … é99999', line('é', 1, 100_000)],
];

/** The fastest of ROUNDS runs of `parse` and of `scan`, alternating, in ms. */
function measure(text: string): { parse: number; scan: number } {
  let parse = Infinity;
  let scan = Infinity;
  for (let r = 0; r < ROUNDS + 2; r++) {
    let t0 = performance.now();
    JSON.parse(text);
    const p = performance.now() - t0;
    t0 = performance.now();
    if (ambiguousKeys(text) !== undefined) throw new Error('the bench line was refused');
    const s = performance.now() - t0;
    // The first two warm the JIT.
    if (r >= 2) {
      parse = Math.min(parse, p);
      scan = Math.min(scan, s);
    }
  }
  return { parse, scan };
}

const rows: Record<string, unknown>[] = [];
const verdicts: [string, boolean][] = [];
for (const [name, text] of LINES) {
  const { parse, scan } = measure(text);
  const ratio = scan / parse;
  const r = (x: number) => Math.round(x * 100) / 100;
  rows.push({ line: name, mib: r(text.length / 2 ** 20), parseMs: r(parse), scanMs: r(scan) });
  verdicts.push([
    `${name}: scan ${r(scan)} ms ≤ 4 × JSON.parse ${r(parse)} ms (${r(ratio)}×)`,
    ratio <= 4,
  ]);
}
process.exitCode = report('key-scan', { rounds: ROUNDS, lines: rows }, verdicts) ? 0 : 1;
