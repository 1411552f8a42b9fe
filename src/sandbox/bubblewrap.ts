/**
 * Bubblewrap around a runner, where the machine has it and it works: new
 * pid/ipc/uts namespaces, no capabilities, a read-only view of only what node
 * needs plus the runner's and the bundle's folders, a private /tmp. With
 * `egressSocket`, a network namespace of its own too, whose only interface
 * is loopback: the only way out is that socket, the host's egress proxy
 * (network/egress-proxy.ts). Without it the network is the host's.
 */
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readlinkSync, realpathSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";

export interface BubblewrapCheck {
  /** The bwrap binary, when it is usable. */
  path: string | null;
  /** Why it is or is not used, for the log. */
  reason: string;
  /** It can give a runner a network namespace of its own (--unshare-net). */
  ownNetwork: boolean;
}

const SYSTEM_DIRS = ["/usr", "/lib", "/lib32", "/lib64", "/libx32"];
const ETC_FILES = ["/etc/ssl", "/etc/ca-certificates", "/etc/hosts", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf"];
/** Only where the runner shares the host's network: in a namespace of its own no name server is reachable, so a look-up that skips the proxy fails at once instead of waiting for one. */
const RESOLVER_FILES = ["/etc/resolv.conf"];

/** Where the egress proxy's socket appears inside the sandbox: short, whatever the host's path. */
export const SANDBOX_EGRESS_SOCKET = "/run/runnel/egress.sock";

/** Where bwrap is: the usual places, then the server's PATH (the runner's own environment is empty). */
export function findBubblewrap(pathVariable: string | undefined = process.env.PATH): string | null {
  const candidates = ["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap", ...(pathVariable ?? "").split(delimiter).filter(Boolean).map((dir) => join(dir, "bwrap"))];
  return candidates.find((candidate) => existsSync(candidate)) ?? null;
}

/** Read-only binds of the system folders and files node needs (merged-/usr systems keep their symlinks). */
function systemArgs(nodeBinary: string, ownNetwork: boolean): string[] {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    if (!existsSync(dir)) continue;
    const stat = lstatSync(dir);
    if (stat.isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
    else args.push("--ro-bind", dir, dir);
  }
  // The node binary's prefix (/usr/local, ~/.nvm/versions/node/vX…) with its lib/ beside bin/.
  const binDir = dirname(realpathSync(nodeBinary));
  const prefix = dirname(binDir) === "/" ? binDir : dirname(binDir);
  if (!SYSTEM_DIRS.some((dir) => prefix === dir || prefix.startsWith(`${dir}/`))) args.push("--ro-bind", prefix, prefix);
  for (const file of ownNetwork ? ETC_FILES : [...ETC_FILES, ...RESOLVER_FILES]) args.push("--ro-bind-try", file, file);
  return args;
}

export interface BubblewrapCommand {
  nodeBinary: string;
  /** Extra read-only folders and files, bound at the same paths. */
  readOnly: string[];
  /** Folders bound writable at the same paths: only the profiling mode's (cpu-profile.ts). */
  writable?: string[];
  cwd: string;
  nodeArgs: string[];
  /** A descriptor on which bwrap writes {"child-pid": …}: see RunnerProcess.stop(). */
  infoFd?: number;
  /** The host path of the egress proxy's socket: the runner gets a network namespace of its own, and this socket at SANDBOX_EGRESS_SOCKET. */
  egressSocket?: string;
}

export function bubblewrapArgs(command: BubblewrapCommand): string[] {
  const args = [
    "--die-with-parent",
    "--new-session",
    "--unshare-pid",
    "--as-pid-1",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(command.egressSocket ? ["--unshare-net"] : []),
    // Only root has capabilities to keep; an unprivileged bwrap already runs without them.
    ...(process.getuid?.() === 0 ? ["--cap-drop", "ALL"] : []),
    "--hostname",
    "runner",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    // Before the binds: runner and bundle folders often live under /tmp.
    "--tmpfs",
    "/tmp",
    ...systemArgs(command.nodeBinary, command.egressSocket !== undefined),
  ];
  if (command.egressSocket) args.push("--bind", command.egressSocket, SANDBOX_EGRESS_SOCKET);
  for (const path of command.readOnly) args.push("--ro-bind", path, path);
  for (const path of command.writable ?? []) args.push("--bind", path, path);
  if (command.infoFd !== undefined) args.push("--info-fd", String(command.infoFd));
  args.push("--chdir", command.cwd, "--", command.nodeBinary, ...command.nodeArgs);
  return args;
}

/** Runs `node --version` under the same binds once: bwrap may exist and still fail (no user namespaces, a container). */
export function checkBubblewrap(nodeBinary: string, pathVariable?: string): BubblewrapCheck {
  const bwrap = findBubblewrap(pathVariable);
  if (!bwrap) return { path: null, reason: "bwrap was not found (install bubblewrap to add namespace isolation)", ownNetwork: false };
  const trial = (ownNetwork: boolean): string | null => {
    let args: string[];
    try {
      args = bubblewrapArgs({ nodeBinary, readOnly: [], cwd: "/", nodeArgs: ["--version"] });
    } catch (error) {
      return `the node binary's folders could not be resolved: ${(error as Error).message}`;
    }
    const probe = spawnSync(bwrap, ownNetwork ? ["--unshare-net", ...args] : args, { env: {}, timeout: 10_000, encoding: "utf8" });
    if (probe.error) return `${bwrap} could not run: ${probe.error.message}`;
    if (probe.status !== 0 || !probe.stdout.startsWith("v")) {
      const detail = (probe.stderr || probe.stdout || "").trim().split("\n")[0] ?? "";
      return `${bwrap} failed a trial run (exit ${String(probe.status ?? probe.signal)}: ${detail})`;
    }
    return null;
  };
  // Runners get a network namespace of their own where bwrap can make one (some containers refuse it).
  if (trial(true) === null) return { path: bwrap, reason: `${bwrap} works on this machine`, ownNetwork: true };
  const failure = trial(false);
  if (failure !== null) return { path: null, reason: failure, ownNetwork: false };
  return { path: bwrap, reason: `${bwrap} works on this machine, but cannot give runners a network namespace of their own`, ownNetwork: false };
}
