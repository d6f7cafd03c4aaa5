/** The error a promise rejects with; fails the test when it resolves instead. */
export async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected the send to fail');
}
