/**
 * The methods MCP defines for a host to send (2025-era and 2026-07-28). The proxy checks the ones
 * that name files by their own rules (call-gate.ts); a method not among these is a server's own
 * (an experimental or custom one), whose params the proxy cannot know, so they are checked as a
 * tool call without a schema is: every string that is a path by its name or its value.
 */
export const MCP_HOST_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'server/discover',
  'subscriptions/listen',
  'tasks/get',
  'tasks/list',
  'tasks/result',
  'tasks/cancel',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
  'notifications/tasks/status',
]);
