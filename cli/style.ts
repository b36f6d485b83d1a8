/**
 * Colour for people at a terminal, and never otherwise: not when output goes to a pipe or a file,
 * not when NO_COLOR is set to anything (https://no-color.org), not on a dumb terminal.
 */
import type { Io } from './io.js';

/** Whether rootsctl may colour what it prints to `io.out`. */
export function useColour(io: Pick<Io, 'isTTY' | 'env'>): boolean {
  const noColor = io.env.NO_COLOR;
  return io.isTTY && (noColor === undefined || noColor === '') && io.env.TERM !== 'dumb';
}

const CODES = { red: 31, green: 32, yellow: 33, dim: 2 } as const;

/** ANSI styles when `on`, the text unchanged otherwise. */
export function paint(on: boolean): Record<keyof typeof CODES, (text: string) => string> {
  const style = (code: number) => (text: string) => (on ? `\x1b[${code}m${text}\x1b[0m` : text);
  return {
    red: style(CODES.red),
    green: style(CODES.green),
    yellow: style(CODES.yellow),
    dim: style(CODES.dim),
  };
}
