-- description: Chain metrics of the Metrics API wide by UTC day: one row per chain and day, one column per metric (day interval).
-- unique: chain_id, metric_day
-- incremental_by: metric_day = cast(make_timestamp(epoch_us(period_start)) as date) from stg_metrics
-- not_null: network, count_metrics
-- column: chain_id: an EVM chain id, or total / mainnet / testnet for the aggregates
-- column: metric_day: the UTC day the values cover
-- column: network: mainnet or fuji
-- column: count_metrics: how many of the metrics have a value for the day
-- column: active_addresses: metric activeAddresses: distinct addresses active (sending or receiving) during the day
-- column: active_senders: metric activeSenders: distinct addresses that sent a transaction during the day
-- column: cumulative_tx_count: metric cumulativeTxCount: transactions since genesis, at the end of the day
-- column: cumulative_addresses: metric cumulativeAddresses: addresses seen since genesis, at the end of the day
-- column: cumulative_contracts: metric cumulativeContracts: contracts deployed since genesis, at the end of the day
-- column: cumulative_deployers: metric cumulativeDeployers: contract deployers since genesis, at the end of the day
-- column: contracts: metric contracts: contracts deployed during the day
-- column: deployers: metric deployers: distinct contract deployers during the day
-- column: gas_used: metric gasUsed: gas used during the day
-- column: tx_count: metric txCount: transactions during the day
-- column: avg_gps: metric avgGps: average gas per second over the day
-- column: max_gps: metric maxGps: highest gas per second of the day
-- column: avg_tps: metric avgTps: average transactions per second over the day
-- column: max_tps: metric maxTps: highest transactions per second of the day
-- column: avg_gas_price: metric avgGasPrice: average gas price of the day (in the unit the Metrics API gives)
-- column: max_gas_price: metric maxGasPrice: highest gas price of the day (in the unit the Metrics API gives)
-- column: fees_paid: metric feesPaid: fees paid during the day (in the unit the Metrics API gives)
with metrics as (
    select * from stg_metrics
    where time_interval = 'day'
),

final as (
    select
        chain_id,
        -- Note: the UTC day from the instant's microseconds since the epoch: timezone('UTC', …) goes through
        -- the time-zone library for every row, about twenty times slower.
        cast(make_timestamp(epoch_us(period_start)) as date) as metric_day,
        any_value(network) as network,
        count(distinct metric) as count_metrics,
        max("value") filter (where metric = 'activeAddresses') as active_addresses,
        max("value") filter (where metric = 'activeSenders') as active_senders,
        max("value") filter (where metric = 'cumulativeTxCount') as cumulative_tx_count,
        max("value") filter (where metric = 'cumulativeAddresses') as cumulative_addresses,
        max("value") filter (where metric = 'cumulativeContracts') as cumulative_contracts,
        max("value") filter (where metric = 'cumulativeDeployers') as cumulative_deployers,
        max("value") filter (where metric = 'contracts') as contracts,
        max("value") filter (where metric = 'deployers') as deployers,
        max("value") filter (where metric = 'gasUsed') as gas_used,
        max("value") filter (where metric = 'txCount') as tx_count,
        max("value") filter (where metric = 'avgGps') as avg_gps,
        max("value") filter (where metric = 'maxGps') as max_gps,
        max("value") filter (where metric = 'avgTps') as avg_tps,
        max("value") filter (where metric = 'maxTps') as max_tps,
        max("value") filter (where metric = 'avgGasPrice') as avg_gas_price,
        max("value") filter (where metric = 'maxGasPrice') as max_gas_price,
        max("value") filter (where metric = 'feesPaid') as fees_paid
    from metrics
    group by chain_id, metric_day
)

select * from final
