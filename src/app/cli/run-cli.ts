// How every command-line entry ends: its exit code, or a one-line failure naming the command
// (never a stack trace for an expected failure such as an unreachable database).
export function runCli(name: string, main: () => Promise<number | void>): void {
  main().then(
    (code) => process.exit(code ?? 0),
    (err: unknown) => {
      console.error(`${name} failed: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
