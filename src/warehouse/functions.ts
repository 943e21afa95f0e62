import type { DuckDBConnection } from '@duckdb/node-api';

/**
 * `_lake.annual_rate(amount, stake, seconds)`: what `amount` earned on `stake` over `seconds` makes in a
 * 365-day year, as a DECIMAL(38, 12) truncated toward zero: `amount × 31,536,000 / (stake × seconds)`
 * (0.08 is 8 %). apr_realized's three rates, exact to their last digit.
 *
 * Exactly, that is HUGEINT arithmetic: (amount × 31,536,000 × 10^12) // (stake × seconds). DuckDB divides
 * HUGEINTs bit by bit, about a microsecond a division on this machine, and multiplies them with overflow
 * checks, which together were most of apr_realized's time. So the rate is computed in DOUBLE first: its
 * inputs' rounding and the four operations put it within 8e-16 of the true value relatively, so under
 * 2^40 units (a rate under 1.1) within 0.001 of a unit. Where the estimate lies at least 0.01 from a
 * whole unit, its floor is the exact answer; the rest (about 2 in 100 rows, and any larger rate or
 * negative operand) take the HUGEINT path.
 */
const ANNUAL_RATE = `
create or replace macro _lake.annual_rate(amount, stake, seconds) as (
    cast(
        case
            when _lake.rate_units_estimate(amount, stake, seconds) between 0 and ${2 ** 40}
                and _lake.rate_units_estimate(amount, stake, seconds)
                    - floor(_lake.rate_units_estimate(amount, stake, seconds)) between 0.01 and 0.99
                then cast(floor(_lake.rate_units_estimate(amount, stake, seconds)) as hugeint)
            else (cast(amount as hugeint) * 31536000 * 1000000000000) // (cast(stake as hugeint) * seconds)
        end
        as decimal(38, 0)
    ) * 0.000000000001
)`;

/** The rate in units of 10^-12 in DOUBLE; null where stake or seconds is not positive, or amount negative. */
const RATE_UNITS_ESTIMATE = `
create or replace macro _lake.rate_units_estimate(amount, stake, seconds) as (
    case
        when amount >= 0 and stake > 0 and seconds > 0
            then cast(amount as double) * 31536000e12 / (cast(stake as double) * cast(seconds as double))
    end
)`;

/**
 * Defines, in the warehouse being built, the functions its models call. They live in the `_lake` schema
 * beside the build's bookkeeping, are defined again at every build (so a changed definition replaces
 * the old one), and stay in the warehouse for anyone who queries it.
 */
export async function defineWarehouseFunctions(db: DuckDBConnection): Promise<void> {
  await db.run('create schema if not exists _lake');
  await db.run(RATE_UNITS_ESTIMATE);
  await db.run(ANNUAL_RATE);
}
