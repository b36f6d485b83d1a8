/**
 * The proxy's refusal to sandbox and `rootsctl doctor`'s sandbox line give one advice for one
 * cause: the same fixes, whichever of the two the user reads.
 */
import t from 'tap';
import { sandboxCheck } from '../../cli/doctor/sandbox.js';
import { probeSandbox } from '../../proxy/sandbox-probe.js';
import { failingBwrap } from '../helpers/failing-bwrap.js';

/** bubblewrap's words on a refusal, and what the advice must then point to. */
const REFUSALS: [string, string, RegExp][] = [
  ['AppArmor (a denied uid map)', 'setting up uid map: Permission denied', /apparmor_parser -r/],
  [
    'a namespace limit',
    'No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.',
    /user\.max_user_namespaces=15000/,
  ],
  [
    'the system call filter',
    'Unable to set up system call filtering as requested: prctl(PR_SET_SECCOMP) reported EINVAL.',
    /CONFIG_SECCOMP_FILTER=y/,
  ],
  ['anything else', 'Creating new namespace failed: Invalid argument', /to see the error/],
];

void t.test('the proxy and doctor give the same fixes for the same refusal', async (t) => {
  // This machine's kernel switches allow user namespaces (its bwrap works): the advice comes
  // from bwrap's words alone, read by both.
  for (const [what, error, points] of REFUSALS) {
    const env = { PATH: failingBwrap(error) };
    const proxy = await probeSandbox(env);
    const doctor = await sandboxCheck(env, '/proc/sys', true);
    if (proxy.ok) {
      t.fail(`${what}: the proxy took a failing bwrap`);
      continue;
    }
    t.equal(doctor.verdict, 'fail', what);
    const fixes = doctor.fix ?? [];
    t.match(fixes.join('\n'), points, `${what}: doctor points to the fix`);
    t.ok(
      proxy.reason.includes(fixes.map((line) => line.trim()).join(' ')),
      `${what}: the proxy's refusal gives doctor's fixes, word for word`,
    );
    t.match(proxy.reason, error.split(':')[0]!, `${what}: and says what bwrap said`);
    t.match(doctor.detail, error.split(':')[0]!, `${what}: as doctor does`);
  }
});
