/**
 * Updates of one URI waiting at once share one daemon check (update-backlog.ts). Attacked with a
 * check asked under the old policy and still pending when the daemon's list says the policy moved
 * (a deny added, a root removed): an update sent after that must not borrow the old answer
 * (**was a hole:** it shared the pending check, so an answer the daemon worked out before the deny
 * passed an update sent under it). Updates already waiting keep their own check; the old check's
 * end does not forget the new one.
 *
 * The backlog alone, with a check the test answers by hand: the daemon's timing cannot be held
 * still from outside, the sharing can.
 */
import t from 'tap';
import type { ProxyLogger } from '../../proxy/log.js';
import { UpdateBacklog } from '../../proxy/update-backlog.js';

const quiet: ProxyLogger = { error() {}, warn() {}, info() {}, debug() {} };

/** A check whose answers the test gives, one per call, in order. */
function handAnswered(): {
  check: (uri: string) => Promise<string | undefined>;
  asked: { uri: string; answer: (why: string | undefined) => void }[];
} {
  const asked: { uri: string; answer: (why: string | undefined) => void }[] = [];
  const check = (uri: string): Promise<string | undefined> =>
    new Promise((answer) => asked.push({ uri, answer }));
  return { check, asked };
}

void t.test(
  'an update after the policy moved is checked afresh, not by the older pending check',
  async (t) => {
    const { check, asked } = handAnswered();
    const backlog = new UpdateBacklog(check, quiet);
    const uri = 'file:///root/secret.txt';

    const before = backlog.admit(uri, 100);
    t.equal(asked.length, 1, 'the first update asks the daemon');
    backlog.policyMoved();
    const after = backlog.admit(uri, 100);
    t.equal(asked.length, 2, 'the update sent under the new policy asks again');
    const again = backlog.admit(uri, 100);
    t.equal(asked.length, 2, 'updates under the same policy still share a check');

    // The old answer (allowed, worked out before the deny) comes last of all.
    asked[1]!.answer('denied by the policy');
    asked[0]!.answer(undefined);
    if (before.kind !== 'checked' || after.kind !== 'checked' || again.kind !== 'checked')
      throw new Error('every update should be checked');
    t.equal(await before.refusal, undefined, 'the update sent before the change keeps its answer');
    t.equal(await after.refusal, 'denied by the policy', 'the later update is refused');
    t.equal(await again.refusal, 'denied by the policy', 'and so is the one sharing its check');

    // The old check settling did not drop the new one from the shared map, nor did the new one's.
    const next = backlog.admit(uri, 100);
    t.equal(asked.length, 3, 'a settled check is not shared');
    asked[2]!.answer(undefined);
    if (next.kind === 'checked') await next.refusal;
  },
);
