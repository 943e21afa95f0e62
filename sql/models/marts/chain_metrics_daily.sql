-- description: Chain metrics of the Metrics API wide by UTC day: one row per network, chain and day, one column per metric (day interval).
-- unique: network, chain_id, metric_day
-- incremental_by: metric_day = cast(make_timestamp(epoch_us(period_start)) as date) from stg_metrics
-- not_null: count_metrics
-- column: chain_id: an EVM chain id, or total / mainnet / testnet for the aggregates (the same aggregate read by a mainnet and a fuji pipeline is one row per network)
-- column: metric_day: the UTC day the values cover
-- column: network: mainnet or fuji, the network of the pipeline that read the metrics
-- column: count_metrics: how many of the metrics have a value for the day
-- column: active_addresses: metric activeAddresses: distinct addresses active (sending or receiving) during the day
-- column: active_senders: metric activeSenders: distinct addresses that sent a transaction during the day
-- column: cumulative_tx_count: metric cumulativeTxCount: transactions since genesis, at the end of the day
-- column: cumulative_addresses: metric cumulativeAddresses: addresses seen since genesis, at the end of the day
-- column: cumulative_contracts: metric cumulativeContracts: contracts deployed since genesis, at the end of the day
-- column: cumulative_deployers: metric cumulativeDeployers: contract deployers since genesis, at the end of the day
-- column: contracts: metric contracts: contracts deployed during the day
-- column: deployers: metric deployers: distinct contract deployers during the day
-- column: gas_used: metric gasUsed: gas used during the day, in gas units
-- column: tx_count: metric txCount: transactions during the day
-- column: avg_gps: metric avgGps: average gas per second over the day (a rate: the DOUBLE the Metrics API sends)
-- column: max_gps: metric maxGps: highest gas per second of the day (a rate: DOUBLE)
-- column: avg_tps: metric avgTps: average transactions per second over the day (a rate: DOUBLE)
-- column: max_tps: metric maxTps: highest transactions per second of the day (a rate: DOUBLE)
-- column: avg_gas_price: metric avgGasPrice: average gas price of the day, in the unit the Metrics API gives (wei per gas from the emulator) (an average: DOUBLE)
-- column: max_gas_price: metric maxGasPrice: highest gas price of the day, in the same unit (a price per gas, like the average: DOUBLE)
-- column: fees_paid: metric feesPaid: fees paid during the day, gas used times gas price (wei from the emulator), as DECIMAL(38,0): the exact value of the number the Metrics API sends, a JSON number that is itself rounded to about 16 significant digits above 2^53 (0.009 AVAX in wei)
--
-- Counts and amounts arrive as JSON numbers (DOUBLE in the lake) and are stored exactly as integers;
-- sql/tests/metrics_whole_values.sql fails if the API ever sends one with a fraction, which a cast
-- would round. The rates that stay DOUBLE are RATE_METRICS of src/reference/metrics.ts, against which
-- test/warehouse/marts.test.ts checks this model's column types.
with metrics as (
    select * from stg_metrics
    where time_interval = 'day'
),

final as (
    select
        chain_id,
        -- Note: the UTC day whatever the session's TimeZone (a cast to date takes the session's day), without
        -- timezone('UTC', …)'s time-zone lookup for every row (about twenty times slower).
        cast(make_timestamp(epoch_us(period_start)) as date) as metric_day,
        network,
        count(distinct metric) as count_metrics,
        cast(max("value") filter (where metric = 'activeAddresses') as bigint) as active_addresses,
        cast(max("value") filter (where metric = 'activeSenders') as bigint) as active_senders,
        cast(max("value") filter (where metric = 'cumulativeTxCount') as bigint) as cumulative_tx_count,
        cast(max("value") filter (where metric = 'cumulativeAddresses') as bigint) as cumulative_addresses,
        cast(max("value") filter (where metric = 'cumulativeContracts') as bigint) as cumulative_contracts,
        cast(max("value") filter (where metric = 'cumulativeDeployers') as bigint) as cumulative_deployers,
        cast(max("value") filter (where metric = 'contracts') as bigint) as contracts,
        cast(max("value") filter (where metric = 'deployers') as bigint) as deployers,
        cast(max("value") filter (where metric = 'gasUsed') as bigint) as gas_used,
        cast(max("value") filter (where metric = 'txCount') as bigint) as tx_count,
        max("value") filter (where metric = 'avgGps') as avg_gps,
        max("value") filter (where metric = 'maxGps') as max_gps,
        max("value") filter (where metric = 'avgTps') as avg_tps,
        max("value") filter (where metric = 'maxTps') as max_tps,
        max("value") filter (where metric = 'avgGasPrice') as avg_gas_price,
        max("value") filter (where metric = 'maxGasPrice') as max_gas_price,
        cast(max("value") filter (where metric = 'feesPaid') as decimal(38, 0)) as fees_paid
    from metrics
    group by network, chain_id, metric_day
)

select * from final
