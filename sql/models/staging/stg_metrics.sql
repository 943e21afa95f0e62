-- description: One row per chain metric point (Metrics API v2), newest value of each period.
-- unique: network, chain_id, metric, time_interval, period_start
-- incremental: true
-- not_null: value
-- accepted_values: time_interval = hour | day | week | month
-- column: chain_id: an EVM chain id, or total / mainnet / testnet for the aggregates
-- column: network: mainnet or fuji, the network of the pipeline that read it
-- column: metric: the metric's name, as the Metrics API gives it (txCount, activeAddresses, gasUsed, avgTps, …)
-- column: time_interval: the period each point covers: hour, day, week or month
-- column: period_start: start of the period the value covers (UTC hour, day, Monday or first of month)
-- column: value: the metric's value for the period, in the metric's own unit (a count, gas, per second, …); the latest period's value is partial until it ends
-- column: extracted_at: when avalake read this version (UTC)
with source as not materialized (
    select * from {{ lake('metrics') }}
),

newest as (
    -- The aggregates (total, mainnet, testnet) can be read by a pipeline of each network: one row per network.
    select * from {{ newest('source', 'network, chain, metric, "interval", "timestamp"') }}
),

final as (
    select
        chain as chain_id,
        network,
        metric,
        "interval" as time_interval,
        "timestamp" as period_start,
        "value",
        _extracted_at as extracted_at
    from newest
)

select * from final
