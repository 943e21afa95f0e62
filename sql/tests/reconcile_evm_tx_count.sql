-- description: Each day's EVM transactions in the lake equal the Metrics API's daily txCount of that chain, for every day the lake holds whole.
-- requires: stg_evm_transactions, stg_metrics
-- Note: only the evm_transactions stream (opt-in) holds every transaction of a chain; erc20 and native
-- transfers hold the configured addresses' only, so they cannot reconcile with txCount. Until a
-- stg_evm_transactions model exists (chain_id, block_timestamp) this test is skipped.
with transactions as (
    select
        chain_id,
        -- Note: the UTC day whatever the session's TimeZone, as the marts take it.
        cast(make_timestamp(epoch_us(block_timestamp)) as date) as day
    from stg_evm_transactions
),

-- The stream reads newest first back to where it stopped: the first and the current day are partial.
coverage as (
    select
        chain_id,
        min(day) + 1 as first_whole_day,
        max(day) - 1 as last_whole_day
    from transactions
    group by chain_id
),

counted as (
    select
        chain_id,
        day,
        count(*) as count_transactions
    from transactions
    group by all
),

tx_count as (
    select
        chain_id,
        cast(make_timestamp(epoch_us(period_start)) as date) as day,
        "value" as tx_count
    from stg_metrics
    where metric = 'txCount'
        and time_interval = 'day'
),

final as (
    select
        tx_count.chain_id,
        tx_count.day,
        tx_count.tx_count as metric_tx_count,
        coalesce(counted.count_transactions, 0) as count_transactions
    from tx_count
    inner join coverage
        on tx_count.chain_id = coverage.chain_id
        and tx_count.day between coverage.first_whole_day and coverage.last_whole_day
    left join counted
        on tx_count.chain_id = counted.chain_id
        and tx_count.day = counted.day
    where coalesce(counted.count_transactions, 0) <> tx_count.tx_count
)

select * from final
order by chain_id, day
