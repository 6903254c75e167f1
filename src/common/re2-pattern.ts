// Regular expressions as Kafka reads them: RE2/J (com.google.re2j.Pattern), matched with matches(),
// so the whole string must match. re2js is a port of RE2/J to JavaScript: the same syntax (no
// backreferences or lookaround, (?P<name>), inline flags anywhere, \pL, [[:alpha:]], \Q...\E), the
// same error messages, and linear-time matching, so a hostile pattern cannot stall the event loop
// as a backtracking RegExp could.
import { RE2JS } from 're2js';

/**
 * A pattern RE2/J refused; the message is RE2/J's PatternSyntaxException message, which Kafka
 * quotes; `description` its getDescription() (the error alone, what the consumer group coordinator quotes).
 */
export class Re2SyntaxError extends Error {
  constructor(message: string, readonly description: string) {
    super(message);
  }
}

export interface Re2Pattern {
  /** Does the pattern match the whole text? */
  matches(text: string): boolean;
}

/** Compiles as Kafka does; throws Re2SyntaxError where RE2/J refuses the pattern. */
export function compileRe2Pattern(pattern: string): Re2Pattern {
  try {
    return RE2JS.compile(pattern);
  } catch (e) {
    const description = (e as { getDescription?: () => string }).getDescription?.() ?? (e as Error).message;
    throw new Re2SyntaxError((e as Error).message, description);
  }
}
