/** The floor's activities: a model call that only waits, a tool that does nothing. */
export async function waitLikeAModel(delayMs: number): Promise<void> {
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
}

/** The floor's local tool. */
export async function returnAtOnce(): Promise<void> {}
