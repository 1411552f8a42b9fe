/**
 * The memory of this process's descendants (the runners, their wrappers), as
 * the machine pays for it: the proportional set size (PSS) from
 * /proc/<pid>/smaps_rollup, where pages that processes share (the node
 * binary, its libraries) count once in all, split between them. RSS would
 * count the shared binary once per runner and overstate a pool of a hundred
 * runners several times over.
 */
import { readdirSync, readFileSync } from "node:fs";

export interface DescendantsMemory {
  processes: number;
  pssMb: number;
}

/** Every process below `root` (default: this one), except those below `exclude` (and it). */
export function descendantsMemory(options: { root?: number; exclude?: readonly number[] } = {}): DescendantsMemory {
  const root = options.root ?? process.pid;
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const parent = parentOf(pid);
    if (parent === undefined) continue;
    const siblings = children.get(parent) ?? [];
    siblings.push(pid);
    children.set(parent, siblings);
  }
  const excluded = new Set(options.exclude ?? []);
  let processes = 0;
  let pssKb = 0;
  const visit = (pid: number): void => {
    for (const child of children.get(pid) ?? []) {
      if (excluded.has(child)) continue;
      processes += 1;
      pssKb += pssOf(child);
      visit(child);
    }
  };
  visit(root);
  return { processes, pssMb: pssKb / 1024 };
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may hold spaces: the fields after its closing one are fixed.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[1]);
  } catch {
    return undefined;
  }
}

function pssOf(pid: number): number {
  try {
    const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return match ? Number(match[1]) : 0;
  } catch {
    // Gone since the listing, or not ours to read.
    return 0;
  }
}
