/** Use a resource and close it whatever happens: the `try`/`finally` every client command repeats. */
export async function closing<R extends { close(): Promise<unknown> }, T>(
  resource: R,
  use: (resource: R) => Promise<T>,
): Promise<T> {
  try {
    return await use(resource);
  } finally {
    await resource.close();
  }
}
