// Group commit: calls that arrive while a write is under way wait for it to end and are then written together, in
// one write of their own. An idle process writes a call as soon as the event loop has taken in what arrived with it
// (no timer, no added wait); a busy one writes as many calls per round trip as arrived during the last one.

/** What one item of a group came to: its value, or the error its caller gets. */
export type GroupOutcome<R> = { value: R } | { error: unknown };

interface Waiting<T, R> {
  item: T;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<T, R> {
  private readonly write: (items: readonly T[]) => Promise<ReadonlyArray<GroupOutcome<R>>>;
  private readonly maxGroup: number;
  private waiting: Waiting<T, R>[] = [];
  private busy = false;

  /**
   * `write` settles a whole group: one outcome per item, in order. When it throws, every caller of the group gets
   * that error.
   */
  constructor(write: (items: readonly T[]) => Promise<ReadonlyArray<GroupOutcome<R>>>, maxGroup: number) {
    this.write = write;
    this.maxGroup = maxGroup;
  }

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.busy) {
        this.busy = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const group = this.waiting.splice(0, this.maxGroup);
      try {
        const outcomes = await this.write(group.map((w) => w.item));
        group.forEach((w, i) => {
          const outcome = outcomes[i];
          if (outcome === undefined) w.reject(new Error('group commit: no outcome for an item'));
          else if ('error' in outcome) w.reject(outcome.error);
          else w.resolve(outcome.value);
        });
      } catch (error) {
        for (const w of group) w.reject(error);
      }
    }
    this.busy = false;
  }
}
