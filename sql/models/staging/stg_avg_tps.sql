-- description: One row per chain and day of the Metrics API v1 average transactions per second, as of its newest value.
-- unique: chain_id, period_start
-- incremental: true
-- not_null: network, avg_tps, last_run_at
-- column: chain_id: the EVM chain id the average is for
-- column: network: mainnet or fuji
-- column: period_start: start of the UTC day the average covers
-- column: avg_tps: average transactions per second over the day (the newest day is still filling up)
-- column: last_run_at: when the service last updated the series, as of the newest read
-- column: extracted_at: when avalake read this version
with source as not materialized (
    select * from {{ lake('avg_tps') }}
),

newest as (
    select * from {{ newest('source', 'chain, "timestamp"') }}
),

final as (
    select
        chain as chain_id,
        network,
        "timestamp" as period_start,
        "value" as avg_tps,
        lastRun as last_run_at,
        _extracted_at as extracted_at
    from newest
)

select * from final
