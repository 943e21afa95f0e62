/** One unit of a schedule: its name, and the names of the units that must finish before it starts. */
export interface Task {
  name: string;
  dependsOn: readonly string[];
}

export interface ScheduleOptions<T extends Task> {
  /** Every task to run, each after the tasks it depends on. A dependency not listed counts as done. */
  tasks: readonly T[];
  /** Tasks running at once, at most. */
  limit: number;
  /** Among the tasks ready, the highest starts first; ties in the order of `tasks`. */
  priority?: (task: T) => number;
  /** Runs one task; `signal` aborts when another has failed (the task may stop early, or finish). */
  run: (task: T, signal: AbortSignal) => Promise<void>;
}

/** Throws unless `limit` can bound how many tasks run at once: a whole number ≥ 1. */
export function checkLimit(limit: number, name: string): void {
  if (!(Number.isInteger(limit) && limit >= 1))
    throw new RangeError(`${name} must be a whole number ≥ 1, got ${limit}`);
}

/**
 * Runs tasks up to `limit` at once, each as soon as everything it depends on has finished. The first
 * failure stops the schedule: nothing more starts, the running tasks are told through their signal,
 * and once every one has settled that failure is thrown (what the aborted tasks throw is not: they
 * failed because they were stopped).
 */
export function runScheduled<T extends Task>({
  tasks,
  limit,
  priority,
  run,
}: ScheduleOptions<T>): Promise<void> {
  checkLimit(limit, 'limit');
  const listed = new Set(tasks.map((t) => t.name));
  const finished = new Set<string>();
  const rank = (task: T) => priority?.(task) ?? 0;
  // A stable sort: equal priorities keep the order given, which is a valid build order.
  const waiting = [...tasks].sort((a, b) => rank(b) - rank(a));
  const isReady = (task: T) => task.dependsOn.every((d) => !listed.has(d) || finished.has(d));
  const controller = new AbortController();
  let running = 0;
  let failure: { error: unknown } | undefined;

  return new Promise<void>((resolve, reject) => {
    const startWhatIsReady = () => {
      while (!failure && running < limit) {
        const at = waiting.findIndex(isReady);
        if (at < 0) break;
        const [task] = waiting.splice(at, 1) as [T];
        running++;
        // Note: a `run` that throws at once fails like one that rejects, not out of this loop.
        new Promise<void>((done) => done(run(task, controller.signal)))
          .then(
            () => finished.add(task.name),
            (error: unknown) => {
              if (failure) return;
              failure = { error };
              controller.abort();
            },
          )
          .finally(() => {
            running--;
            startWhatIsReady();
          });
      }
      if (running > 0) return;
      if (failure) reject(failure.error);
      else if (waiting.length === 0) resolve();
      else
        reject(
          new Error(
            `tasks wait on each other: ${waiting.map((t) => `${t.name} (after ${t.dependsOn.join(', ')})`).join('; ')}`,
          ),
        );
    };
    startWhatIsReady();
  });
}
