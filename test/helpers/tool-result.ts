/** What a test reads of a `tools/call` result, whichever SDK client returned it. */

/** A tool result as a test reads it: its text contents joined by lines, and whether it is an error. */
export interface ToolOutcome {
  text: string;
  isError: boolean;
}

/** The text and error flag of a `tools/call` result (no content reads as empty text). */
export function toolOutcome(result: object): ToolOutcome {
  const { content, isError } = result as { content?: { text?: string }[]; isError?: unknown };
  return { text: (content ?? []).map((c) => c.text ?? '').join('\n'), isError: isError === true };
}
