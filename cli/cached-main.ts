/**
 * The `rootsctl` executable. The build (scripts/bundle.mjs) bundles it as CommonJS into
 * `dist/cli/rootsctl.cjs`, the package's bin, and links `dist/cli/main.js` to it: a CommonJS main
 * file starts without Node's ES module loader.
 * `--version` and `--help` are answered here, before any bundle is read. Any other command runs
 * `start` (cli/start.ts) from the CommonJS bundle that holds that command and no other (the
 * build makes one per module of cli/commands/, and one holding them all for a command line that
 * names none), compiled with V8's code cache when a safe cache directory holds one
 * (cli/code-cache.ts says why and where). A smaller bundle is less to read and less for V8 to
 * set up: `status` no longer carries the YAML parser, nor `validate` the socket client.
 * The file begins with lines for sh (common/extra-ca-certs.ts): started as a program, Node starts
 * without `NODE_EXTRA_CA_CERTS`, and the first thing done here is to put it back.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { runCached } from './code-cache.js';
import { commandWord } from './command-word.js';
import { restoreExtraCaCerts } from '../common/extra-ca-certs.js';
import { quickAnswer } from './quick-answer.js';

/**
 * The bundles beside this file by command (`''`: the one holding every command); the build
 * writes it in. Their names carry a hash of their contents.
 */
declare const ROOTSCTL_BUNDLES: Record<string, string>;

// Before anything that could start a program: every child sees the person's environment.
restoreExtraCaCerts();

const args = process.argv.slice(2);
const quick = quickAnswer(args);
if (quick !== undefined) process.stdout.write(quick);
else {
  const command = commandWord(args);
  const name =
    command !== undefined && Object.hasOwn(ROOTSCTL_BUNDLES, command)
      ? ROOTSCTL_BUNDLES[command]!
      : ROOTSCTL_BUNDLES['']!;
  const url = new URL(`./${name}`, import.meta.url);
  const file = fileURLToPath(url);
  const bundles = [...new Set(Object.values(ROOTSCTL_BUNDLES))];
  const exports = runCached(
    file,
    command,
    (fn) => {
      const module = { exports: {} as { start?: () => Promise<number> } };
      fn(module.exports, createRequire(file), module, file, url.href);
      return module.exports;
    },
    bundles,
  );
  void exports.value.start!().then((code) => {
    process.exitCode = code;
    // After the command ran: the functions it compiled lazily are in the cache too.
    exports.save();
  });
}
