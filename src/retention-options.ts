// The retention option (docs/SEMANTICS.md §8, "Retention"): how long records are kept, and how long
// a partition of them spans. Read alike from createToolgate({ retention }) and TOOLGATE_RETENTION.
import { ToolgateConfigError } from './errors';
import { OPTION_BOUNDS } from './option-bounds';

export type PartitionUnit = 'month' | 'day';

export interface RetentionSettings {
  /** Records are kept at least this long; null keeps every record. */
  keepDays: number | null;
  /** How long one partition spans: a retention drops whole ones. */
  partitions: PartitionUnit;
}

export interface RetentionOptions {
  /** `<n>d`, such as `90d`; `off` (the default) keeps everything. */
  keep?: string;
  partitions?: PartitionUnit;
}

export const RETENTION_DEFAULTS: RetentionSettings = { keepDays: null, partitions: 'month' };

const DAYS = /^([1-9][0-9]{0,5})d$/;

/** `90d` (or `off`), or `{ keep, partitions }`, as settings; anything else is ERR_TOOLGATE_RETENTION. */
export function checkRetentionOptions(
  given: string | RetentionOptions | undefined,
  where = 'createToolgate({ retention })',
): RetentionSettings {
  if (given === undefined) return RETENTION_DEFAULTS;
  const options: RetentionOptions = typeof given === 'string' ? { keep: given } : given;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw retentionError(where, given);
  for (const key of Object.keys(options)) {
    if (key !== 'keep' && key !== 'partitions') throw retentionError(where, given, `it takes keep and partitions, not ${key}`);
  }
  const partitions = options.partitions ?? RETENTION_DEFAULTS.partitions;
  if (partitions !== 'month' && partitions !== 'day') throw retentionError(where, given, 'partitions is "month" or "day"');
  return { keepDays: keepDaysOf(options.keep, where, given), partitions };
}

function keepDaysOf(keep: unknown, where: string, given: unknown): number | null {
  if (keep === undefined || keep === 'off') return null;
  const m = typeof keep === 'string' ? DAYS.exec(keep.trim()) : null;
  const [min, max] = OPTION_BOUNDS.retentionDays;
  const days = m ? Number(m[1]) : NaN;
  if (!(days >= min && days <= max))
    throw retentionError(where, given, `keep is a number of days from ${min} to ${max}, such as "90d", or "off"`);
  return days;
}

function retentionError(
  where: string,
  given: unknown,
  detail = 'give "90d" (a number of days), "off", or { keep, partitions }',
): ToolgateConfigError {
  return new ToolgateConfigError('ERR_TOOLGATE_RETENTION', `${where} was given ${JSON.stringify(given) ?? typeof given}: ${detail}.`);
}
