/** `rootsctl init`: write a starter policy. */
import { onPolicy } from '../on-policy.js';
import { mkdir, realpath, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { errnoCode, ignoreMissing, RootsError } from '../../common/errors.js';
import { configFile, homeDir, tildify } from '../../common/locations.js';
import { packageRoot } from '../../common/package-info.js';
import { EXIT, type ExitCode, type Io } from '../io.js';
import { commandLine, ctl } from '../hint.js';
import type { Options } from '../options.js';
import { inLine } from '../terminal-text.js';

/** The `$schema` reference for editors: this installation's roots.schema.json. */
export function schemaReference(): string {
  const file = join(packageRoot(), 'roots.schema.json');
  // The modeline ends at whitespace, so a path with a space goes as a file: URL.
  return /\s/.test(file) ? pathToFileURL(file).href : file;
}

/** The starter policy `rootsctl init` writes. */
export function starterPolicy(schema: string): string {
  return `# yaml-language-server: $schema=${schema}
#
# mcp-roots policy: which files each MCP server may see. Written by \`rootsctl init\`.
# Check it with \`rootsctl validate\`; a running mcp-rootsd picks up every saved edit
# (an invalid edit is reported by \`rootsctl status\` and the last valid policy keeps serving).
# The whole language: docs/policy.md of mcp-roots.
version: 1

# Roots in this file are read-only unless they say \`readOnly: false\` (an included
# file has its own defaults).
defaults:
  readOnly: true

# No server may read or write these, whatever a root below says. A deny is a
# pattern: it also covers paths that do not exist yet.
deny:
  # keys, credentials and tokens
  - ~/.ssh
  - ~/.gnupg
  - ~/.aws
  - ~/.config/gcloud
  - ~/.kube
  - ~/.docker/config.json
  - ~/.netrc
  - ~/.password-store
  - ~/.local/share/keyrings
  - ~/.git-credentials
  - ~/.config/gh
  - ~/.npmrc
  - ~/.pypirc
  - ~/.azure
  - ~/.cargo/credentials
  - ~/.cargo/credentials.toml
  # browser profiles (cookies, saved passwords, history)
  - ~/.mozilla
  - ~/snap/firefox
  - ~/.config/google-chrome
  - ~/.config/chromium
  - ~/.config/BraveSoftware
  - ~/.config/microsoft-edge
  - ~/.config/vivaldi
  # environment files at any depth under every root (quoted: YAML reads * as an alias)
  - '**/.env'
  # what runs as you later: readable, never writable (an agent could run code outside any policy)
  - {path: ~/.bashrc, access: write}
  - {path: ~/.bash_profile, access: write}
  - {path: ~/.profile, access: write}
  - {path: ~/.zshrc, access: write}
  - {path: ~/.zprofile, access: write}
  - {path: ~/.config/fish, access: write}
  - {path: ~/.config/autostart, access: write}
  - {path: ~/.config/systemd, access: write}
  - {path: ~/.local/bin, access: write}

servers:
  # The name the proxy asks for: in your MCP host's configuration, run the server as
  #   mcp-roots-proxy --server filesystem -- npx -y @modelcontextprotocol/server-filesystem {roots}
  # ({roots} becomes these roots on its command line: a 2026-07-28 host gives it none itself)
  filesystem:
    roots:
      - path: ~/projects # read-only (the default above)
      # - path: ~/projects/my-app # writable
      #   readOnly: false
      # - path: ~/Downloads # for a while; RFC 3339 with a zone
      #   expires: 2030-01-01T00:00:00Z
      # - path: ~/repos/* # a glob: each matching directory is its own root
`;
}

/** Write the starter policy to the main policy file; never overwrite without `force`. */
export async function initPolicy(
  io: Io,
  opts: { force: boolean; config?: string },
): Promise<ExitCode> {
  const home = homeDir(io.env);
  const file = configFile(io.env, io.cwd, opts.config);
  const text = starterPolicy(schemaReference());
  await mkdir(dirname(file), { recursive: true });
  if (!opts.force) {
    try {
      await writeFile(file, text, { flag: 'wx' });
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
      io.err(
        `rootsctl: ${inLine(tildify(file, home))} already exists; not overwriting it. Edit it, or run \`${ctl(io, 'init --force')}\` to replace it with the starter policy.\n`,
      );
      return EXIT.fail;
    }
  } else {
    // Replace the file a symlink points at (a dotfiles repository), not the link; atomically, so a
    // running daemon never reads half a file.
    const target = (await ignoreMissing(realpath(file))) ?? file;
    const temp = `${target}.${process.pid}.tmp`;
    try {
      await writeFile(temp, text);
      await rename(temp, target);
    } catch (err) {
      throw new RootsError('PATH_INVALID', `cannot write ${target}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  io.out(
    `wrote ${inLine(tildify(file, home))}\n` +
      `Next: edit it (one server, filesystem, sees ~/projects read-only), check it with \`${ctl(io, onPolicy(io, 'validate', file))}\`,\n` +
      `and run the daemon: \`${ctl(io, 'install-service')}\` (systemd), or \`${commandLine(io, 'mcp-rootsd', '')}\` in a terminal.\n`,
  );
  return EXIT.ok;
}

/** `rootsctl init [--force] [--config FILE]`. */
export function init(io: Io, _args: string[], opts: Options): Promise<ExitCode> {
  return initPolicy(io, { force: opts.force ?? false, config: opts.config });
}
