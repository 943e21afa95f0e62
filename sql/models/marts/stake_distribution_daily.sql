-- description: Stake distribution of the primary network per UTC day, as the day's last validators snapshot shows it.
-- unique: network, snapshot_day
-- incremental_after: snapshot_at from stg_validators
-- not_null: snapshot_at, total_stake_navax, validator_stake_navax, delegator_stake_navax, count_validators, count_delegators, nakamoto_coefficient, largest_stake_navax
-- column: network: mainnet or fuji
-- column: snapshot_day: the UTC day
-- column: snapshot_at: the day's last snapshot, whose validators the row describes
-- column: total_stake_navax: the validators' own stake plus the stake delegated to them, in nAVAX
-- column: validator_stake_navax: the validators' own stake, in nAVAX
-- column: delegator_stake_navax: the stake delegated to them, in nAVAX
-- column: count_validators: validators of the primary network
-- column: count_delegators: current delegations to them
-- column: nakamoto_coefficient: the smallest number of node ids whose combined stake (own plus delegated) exceeds one third of total_stake_navax (strictly: top stakes of exactly one third are not enough), over the primary network's validators of the day's last snapshot; each node id counts as one, even when one operator runs several. One third is the usual BFT safety threshold; the column is this count, not a measure of what would stall Snowman consensus
-- column: largest_stake_navax: the stake (own plus delegated) of the largest validator
-- column: supply_navax: the primary network's supply (platform.getCurrentSupply's upper bound) read at or before snapshot_at, in nAVAX; null when none was read
-- column: staking_ratio: total_stake_navax over supply_navax, exact to 18 decimals (rounded down); null without a supply
--
-- A build computes only the days of the snapshots taken since the last one (incremental_after): a day
-- with a new snapshot has it as its last, so its row comes from the new rows alone, and the days before
-- keep theirs. The supply is read whole.
with validators as (
    select * from stg_validators
    where subnet = 'primary'
),

supply as (
    select network, snapshot_at, supply_navax
    from stg_current_supply
    where subnet = 'primary'
),

day_snapshots as (
    select
        network,
        -- Note: the UTC day whatever the session's TimeZone (a cast to date takes the session's day), without
        -- timezone('UTC', …)'s time-zone lookup for every row (about twenty times slower).
        cast(make_timestamp(epoch_us(snapshot_at)) as date) as snapshot_day,
        max(snapshot_at) as snapshot_at
    from validators
    group by all
),

staked as (
    select
        day_snapshots.network,
        day_snapshots.snapshot_day,
        day_snapshots.snapshot_at,
        validators.node_id,
        validators.weight as validator_stake_navax,
        coalesce(validators.delegator_weight_navax, 0) as delegator_stake_navax,
        validators.weight + coalesce(validators.delegator_weight_navax, 0) as stake_navax,
        coalesce(validators.delegator_count, 0) as count_delegators
    from day_snapshots
    inner join validators
        on day_snapshots.network = validators.network
        and day_snapshots.snapshot_at = validators.snapshot_at
),

ranked as (
    select
        *,
        row_number() over day_ranking as stake_rank,
        sum(stake_navax) over (day_ranking rows between unbounded preceding and current row) as cumulative_stake_navax,
        sum(stake_navax) over (partition by network, snapshot_day) as day_stake_navax
    from staked
    window day_ranking as (partition by network, snapshot_day order by stake_navax desc, node_id)
),

final as (
    select
        network,
        snapshot_day,
        any_value(snapshot_at) as snapshot_at,
        sum(stake_navax) as total_stake_navax,
        sum(validator_stake_navax) as validator_stake_navax,
        sum(delegator_stake_navax) as delegator_stake_navax,
        count(*) as count_validators,
        cast(sum(count_delegators) as bigint) as count_delegators,
        min(stake_rank) filter (where cumulative_stake_navax * 3 > day_stake_navax) as nakamoto_coefficient,
        max(stake_navax) as largest_stake_navax
    from ranked
    group by network, snapshot_day
),

-- The newest supply read at or before the day's snapshot (a run reads both at once). The ratio is
-- computed in integers and scaled, so it is exact: DuckDB divides DECIMALs as DOUBLEs.
with_supply as (
    select
        final.*,
        supply.supply_navax,
        cast(
            cast(final.total_stake_navax as hugeint) * 1000000000000000000
            // cast(supply.supply_navax as hugeint) as decimal(38, 0)
        ) * 0.000000000000000001 as staking_ratio
    from final
    asof left join supply
        on final.network = supply.network
        and final.snapshot_at >= supply.snapshot_at
)

select * from with_supply
