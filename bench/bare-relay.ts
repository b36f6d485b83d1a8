/**
 * A process between a host and a stdio server that only passes bytes, both ways, unread: the
 * floor under any stdio proxy (two more pipe hops and one more process to wake per message), set
 * beside the proxy in `proxy-overhead.ts`.
 */
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2) as [string, ...string[]];
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.on('exit', (code) => process.exit(code ?? 1));
