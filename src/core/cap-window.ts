// A cap's window as people write it (SEMANTICS §13): `<n><s|m|h|d>`, such as 1d or 90m, read into
// seconds, and written back in the largest unit that holds it exactly.

const UNITS = { d: 86_400, h: 3_600, m: 60, s: 1 } as const;
const WINDOW = /^([1-9][0-9]{0,7})([smhd])$/;

/** The window in seconds, or null when it is not `<n><s|m|h|d>`. */
export function windowSeconds(text: string): number | null {
  const match = WINDOW.exec(text);
  if (!match) return null;
  return Number(match[1]) * UNITS[match[2] as keyof typeof UNITS];
}

/** 86400 → "1d", 5400 → "90m", 45 → "45s". */
export function windowText(seconds: number): string {
  for (const [unit, size] of Object.entries(UNITS)) if (seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}
