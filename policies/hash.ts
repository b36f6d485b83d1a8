/**
 * The hashes that name a policy's bytes. The daemon tells "these files are the ones loaded" from
 * "someone edited them" by comparing these, so the parser, the state and the watcher must compute
 * them byte for byte alike: here, once.
 */
import { crypto } from '../common/lazy-crypto.js';

/** sha256 (hex) of one file's bytes, as `ParsedPolicyFile.sha256` holds it. */
export function fileHash(bytes: string | Uint8Array): string {
  return crypto().createHash('sha256').update(bytes).digest('hex');
}

/** The hash of a whole policy: its files' hashes, in load order (grants last). */
export function combinedHash(fileHashes: readonly string[]): string {
  return crypto().createHash('sha256').update(fileHashes.join('\n')).digest('hex');
}
