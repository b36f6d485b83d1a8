/**
 * The single-daemon lock: an abstract Unix socket, which the kernel releases when its holder
 * dies, so that two daemons starting at once cannot both win and a crash leaves nothing stale.
 *
 * Abstract names carry no permissions, and `/proc/net/unix` lists them to every process of the
 * network namespace: another user, or a sandboxed server that keeps the network, can read the
 * name while a daemon runs and bind it once the daemon stops. So a name is not trusted by being
 * held. Each name derives from a secret token kept in the `0700` socket directory and a
 * generation (0, 1, …); a starting daemon takes the first generation it can bind, and a name
 * that is held must prove its holder knows the token (an HMAC of a fresh challenge), or it is
 * passed over as squatted. Every starting daemon walks the same names in the same order, so two
 * that start at once still meet at the same free name, and only one binds it.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { listenOn } from './server-listen.js';
import { errnoCode, ignoreMissing, RootsError } from '../common/errors.js';
import { lockName } from '../protocol/socket-path.js';

/** How many names a start tries before it gives up (each squatted one was seen bound once). */
export const LOCK_GENERATIONS = 8;
/**
 * How long a held name's holder has to answer the challenge. A daemon answers from its event
 * loop, so a daemon busy starting (reading a large policy) must be given time; a squatter that
 * accepts and says nothing costs a start this much per name.
 */
const PROOF_MS = 5000;
/** The challenge and the proof are one line each, of this many bytes at most. */
const LINE_MAX = 200;

/** A held lock: its server (close it to release) and the names passed over on the way. */
export interface HeldLock {
  server: Server;
  generation: number;
  /** Each name passed over because its holder did not prove to be an mcp-rootsd: why. */
  passedOver: string[];
}

/** What a daemon holding a lock was found to be. */
export type LockOutcome = HeldLock | { running: true };

/**
 * The proof of knowing `token` for `challenge` sent to the lock `name`. The name is in it: every
 * daemon whose socket is in one directory shares its token, and a squatter of one daemon's name
 * could otherwise pass each challenge on to another daemon that runs, and its answer back.
 */
const proof = (token: string, name: string, challenge: string): string =>
  createHmac('sha256', token).update(`mcp-roots lock\0${name}\0${challenge}`).digest('hex');

/** The abstract name of generation `g` (generation 0 keeps the name the lock has always had). */
const nameOf = (socketPath: string, uid: number, token: string, g: number): string =>
  lockName(socketPath, uid, g === 0 ? token : `${token}\0${g}`);

/**
 * Take the lock for `socketPath`: the first generation's name that is free, or `{running}` when
 * a name on the way is held by a daemon that proves it knows the token. Throws when every
 * generation's name is held by something else (`passedOver` in the message).
 */
export async function takeLock(socketPath: string, uid: number, dir: string): Promise<LockOutcome> {
  const token = await lockToken(dir);
  const passedOver: string[] = [];
  for (let g = 0; g < LOCK_GENERATIONS; g++) {
    const name = nameOf(socketPath, uid, token, g);
    const server = createServer((s) => answerChallenges(s, token, name));
    try {
      await listenOn(server, name);
      return { server, generation: g, passedOver };
    } catch (err) {
      if (errnoCode(err) !== 'EADDRINUSE') throw err;
    }
    const held = await challenge(name, token);
    if (held === undefined) return { running: true };
    passedOver.push(`lock name ${g}: ${held}`);
  }
  throw new RootsError(
    'DAEMON_RUNNING',
    `cannot take ${socketPath}: all ${LOCK_GENERATIONS} of its lock names are held by something that is not an mcp-rootsd (${passedOver.join('; ')}). Find the holder with  ss -xlp | grep mcp-roots  and stop it; or, with no mcp-rootsd running, remove ${join(dir, '.lock-token')} so that the next start picks new names`,
  );
}

/** The lock's side: answer one challenge per connection with the proof, then hang up. */
function answerChallenges(socket: Socket, token: string, name: string): void {
  socket.setTimeout(PROOF_MS, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  firstLine(socket, (challengeText) => {
    // A challenge is 32 hex digits; anything else gets nothing.
    if (/^[0-9a-f]{32}$/.test(challengeText)) socket.end(`${proof(token, name, challengeText)}\n`);
    else socket.destroy();
  });
}

/**
 * Hands `onLine` the first line `socket` sends, without its end ('' when none ends within
 * LINE_MAX), then stops reading: whatever follows stays in the kernel's buffer, not in memory.
 */
function firstLine(socket: Socket, onLine: (line: string) => void): void {
  let text = '';
  socket.on('data', function read(chunk) {
    text += chunk.toString('latin1');
    const end = text.indexOf('\n');
    if (end < 0 && text.length <= LINE_MAX) return;
    socket.off('data', read);
    socket.pause();
    onLine(end < 0 ? '' : text.slice(0, end));
  });
}

/**
 * Challenge the holder of `name`: undefined if it proves it knows `token` (a daemon holds the
 * lock), or why it is taken for a squatter.
 */
function challenge(name: string, token: string): Promise<string | undefined> {
  const challengeText = randomBytes(16).toString('hex');
  const expected = Buffer.from(proof(token, name, challengeText));
  return new Promise((resolve) => {
    let settled = false;
    const done = (why: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(why);
    };
    const timer = setTimeout(
      () => done(`its holder did not prove it is an mcp-rootsd within ${PROOF_MS / 1000} s`),
      PROOF_MS,
    );
    const socket = createConnection({ path: name });
    socket.on('connect', () => socket.write(`${challengeText}\n`));
    socket.on('error', (err) =>
      done(
        errnoCode(err) === 'ECONNREFUSED'
          ? 'bound by something that does not listen'
          : `its holder could not be asked (${err.message})`,
      ),
    );
    firstLine(socket, (answer) => {
      const got = Buffer.from(answer);
      done(
        got.length === expected.length && timingSafeEqual(got, expected)
          ? undefined
          : 'its holder answered without the proof',
      );
    });
    socket.on('end', () => done('its holder hung up without the proof'));
  });
}

/**
 * A random token kept in the socket directory (0700, ours): part of the lock's abstract names,
 * and the key of their proofs. Made once; two daemons starting together read the same one.
 */
async function lockToken(dir: string): Promise<string> {
  const file = join(dir, '.lock-token');
  const fresh = randomBytes(16).toString('hex');
  // Written whole under a private name, then linked into place: link() either makes the complete
  // file appear or fails because another daemon's did, so no reader ever sees a half-written one.
  const temp = join(dir, `.lock-token.${process.pid}.${fresh.slice(0, 8)}`);
  await writeFile(temp, fresh, { mode: 0o600 });
  try {
    await link(temp, file);
    return fresh;
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') throw err;
    return (await readFile(file, 'utf8')).trim();
  } finally {
    await ignoreMissing(unlink(temp));
  }
}
