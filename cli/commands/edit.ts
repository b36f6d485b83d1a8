/**
 * `rootsctl edit`: change the policy the way `visudo` and `crontab -e` change theirs. The editor
 * works on a private copy; on save the copy is validated as if it stood in the policy's place
 * (its includes resolve from there), and only a valid policy replaces the file, atomically, so a
 * running daemon never reads a half-written or invalid file. An invalid save re-opens the editor
 * with the errors written at the top of the copy.
 */
import { isDefaultPolicy } from '../on-policy.js';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { errnoCode, ignoreMissing, RootsError } from '../../common/errors.js';
import { configFile, homeDir, tildify } from '../../common/locations.js';
import type { PolicyError } from '../../common/types.js';
import { loadAndResolve, nodeFs } from '../../policies/index.js';
import { problemLine, sortProblems } from '../format.js';
import { EXIT, type ExitCode, type Io } from '../io.js';
import { processContext } from '../offline.js';
import type { Options } from '../options.js';
import { inLine } from '../terminal-text.js';
import { schemaReference, starterPolicy } from './init.js';

/** Lines rootsctl writes above the policy in the copy; taken out again before validating. */
const MARK = '#! rootsctl edit: ';

/** The editor the person chose: `$VISUAL`, else `$EDITOR`, else vi. */
export function chooseEditor(env: Io['env']): string {
  return env.VISUAL || env.EDITOR || 'vi';
}

function runEditor(io: Io, editor: string, file: string): Promise<number> {
  // Through the shell, as crontab and git do: $EDITOR may carry arguments ("code --wait").
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', `${editor} "$1"`, 'sh', file], {
      stdio: 'inherit',
      env: io.env,
      cwd: io.cwd,
    });
    child.once('error', reject);
    child.once('close', (code, signal) => resolve(signal ? 128 : (code ?? 1)));
  });
}

function stripMarks(text: string): string {
  const lines = text.split('\n');
  let i = 0;
  while (i < lines.length && lines[i]!.startsWith(MARK)) i++;
  return lines.slice(i).join('\n');
}

function withMarks(text: string, errors: PolicyError[], home: string, target: string): string {
  const lines = 2 + errors.length;
  const head = [
    `${MARK}NOT SAVED: the policy below has errors. Fix them and save to try again;`,
    `${MARK}quit without changing anything to leave the policy as it was.`,
    ...errors.map(
      // One line each: a line end in a message would start a line that is not marked, and so
      // would be saved as policy. An error in the file being edited also says where it is in
      // this buffer, which these lines push down.
      (e) =>
        `${MARK}error: ${problemLine(e, home)}${e.file === target ? ` (line ${e.line + lines} here)` : ''}`,
    ),
  ];
  return `${head.join('\n')}\n${text}`;
}

/** `dev:ino` of the file at `target` (as a policy load knows files), or a name of its own if none. */
async function identity(target: string): Promise<string> {
  const st = await ignoreMissing(stat(target, { bigint: true }));
  return st === undefined ? `edited:${target}` : `${st.dev}:${st.ino}`;
}

/** Validate `text` as the policy at `target`: the real filesystem, with `text` in the file's place. */
async function check(io: Io, target: string, text: string) {
  const fs = nodeFs();
  const bytes = Buffer.from(text);
  const view = {
    ...fs,
    // The edited text stands for the file at `target`, under the identity of what is there now.
    readFile: async (p: string) =>
      p === target ? { bytes, id: await identity(target), real: target } : fs.readFile(p),
    realpath: async (p: string) => (p === target ? target : fs.realpath(p)),
  };
  const evaluation = await loadAndResolve(
    { configFile: target },
    processContext(io.env, { fs: view }),
  );
  return { errors: sortProblems(evaluation.errors), warnings: sortProblems(evaluation.warnings) };
}

/** Replace `target` with `text` atomically, keeping its mode; refuse if it changed meanwhile. */
async function replace(target: string, text: string, before: string | undefined): Promise<void> {
  const now = await ignoreMissing(readFile(target, 'utf8'));
  if (now !== before) {
    throw new RootsError(
      'POLICY_INVALID',
      `${target} changed while you were editing it; not overwriting those changes`,
    );
  }
  const mode = (await ignoreMissing(stat(target)))?.mode ?? 0o644;
  const temp = `${target}.${process.pid}.tmp`;
  try {
    await writeFile(temp, text, { mode: mode & 0o777, flag: 'wx' });
    await rename(temp, target);
  } catch (err) {
    await rm(temp, { force: true });
    throw new RootsError(
      'PATH_INVALID',
      `cannot write ${target}: ${errnoCode(err) ?? String(err)}`,
      {
        cause: err,
      },
    );
  }
}

/** `rootsctl edit [--config FILE]`: exit 0 when saved (or nothing changed), 1 when not saved. */
export async function edit(io: Io, _args: string[], opts: Options): Promise<ExitCode> {
  const home = homeDir(io.env);
  const file = configFile(io.env, io.cwd, opts.config);
  // Edit the file a symlink points at (a dotfiles repository), not the link.
  const target = (await ignoreMissing(realpath(file))) ?? file;
  const original = await ignoreMissing(readFile(target, 'utf8'));
  const shown = inLine(tildify(file, home));
  const dir = await mkdtemp(join(tmpdir(), 'rootsctl-edit-'));
  const copy = join(dir, basename(target));
  const editor = chooseEditor(io.env);
  try {
    let offered = original ?? starterPolicy(schemaReference());
    if (original === undefined)
      io.err(`${shown} does not exist yet; starting from the starter policy.\n`);
    /** Whether the editor was opened again, with the errors of what was saved. */
    let reopened = false;
    for (;;) {
      await writeFile(copy, offered, { mode: 0o600 });
      const code = await runEditor(io, editor, copy);
      if (code !== 0) {
        io.err(`rootsctl: ${inLine(editor)} exited with ${code}; ${shown} is unchanged.\n`);
        return EXIT.fail;
      }
      const saved = await readFile(copy, 'utf8');
      if (saved === offered) {
        if (saved === original) {
          io.out(`No changes; ${shown} is unchanged.\n`);
          return EXIT.ok;
        }
        if (original === undefined && !reopened) {
          // The starter policy, closed as it was offered: nothing to save, as for a file that
          // exists and was not changed.
          io.out(`No changes; ${shown} was not created (save the starter policy to create it).\n`);
          return EXIT.ok;
        }
        io.err(`rootsctl: not saved; ${shown} is unchanged.\n`);
        return EXIT.fail;
      }
      const text = stripMarks(saved);
      if (text.trim() === '') {
        io.err(`rootsctl: the edited policy is empty; not saved. ${shown} is unchanged.\n`);
        return EXIT.fail;
      }
      const { errors, warnings } = await check(io, target, text);
      if (errors.length === 0) {
        if (text === original) {
          io.out(`No changes; ${shown} is unchanged.\n`);
          return EXIT.ok;
        }
        await replace(target, text, original);
        for (const w of warnings) io.out(`warning: ${problemLine(w, home)}\n`);
        const daemon = isDefaultPolicy(io, file)
          ? 'a running mcp-rootsd'
          : 'an mcp-rootsd serving it';
        io.out(`saved ${shown} (valid); ${daemon} applies it now.\n`);
        return EXIT.ok;
      }
      for (const e of errors) io.err(`error: ${problemLine(e, home)}\n`);
      io.err(
        `rootsctl: not saved: ${errors.length} error${errors.length === 1 ? '' : 's'}; re-opening the editor.\n`,
      );
      offered = withMarks(text, errors, home, target);
      reopened = true;
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
