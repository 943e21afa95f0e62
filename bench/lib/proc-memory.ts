import { readFileSync } from 'node:fs';

export const MB = 1024 * 1024;

/** A process's resident memory now and its high-water mark, in bytes (Linux /proc). */
export interface ProcMemory {
  rss: number;
  hwm: number;
}

export function readProcMemory(pid: number): ProcMemory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!match) throw new Error(`/proc/${pid}/status has no ${field} line; is this Linux?`);
    return Number(match[1]) * 1024;
  };
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/**
 * Samples a process's RSS every `intervalMs`. VmHWM is the kernel's own peak, so it catches spikes
 * between samples; the samples show how memory moved over a run.
 */
export function sampleProcMemory(pid: number, intervalMs = 100) {
  let peakRss = 0;
  let hwm = 0;
  const read = () => {
    try {
      const m = readProcMemory(pid);
      peakRss = Math.max(peakRss, m.rss);
      hwm = Math.max(hwm, m.hwm);
    } catch {
      // The process exited between two samples; the last values stand.
    }
  };
  read();
  const timer = setInterval(read, intervalMs);
  timer.unref();
  return {
    /** Peak of the samples and of VmHWM so far, read now. */
    peak(): ProcMemory {
      read();
      return { rss: peakRss, hwm };
    },
    stop(): ProcMemory {
      read();
      clearInterval(timer);
      return { rss: peakRss, hwm };
    },
  };
}
