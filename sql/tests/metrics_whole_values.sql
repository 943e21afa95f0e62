-- description: The Metrics API's counts and amounts are whole numbers, so chain_metrics_daily holds them exactly as BIGINT or DECIMAL(38,0): a value with a fraction (or not finite) would be rounded or refused by its cast.
-- requires: stg_metrics
-- The count metrics are those not in RATE_METRICS of src/reference/metrics.ts; test/warehouse/test.test.ts
-- fails when the list below drifts from it.
with metrics as (
    select * from stg_metrics
),

final as (
    select
        network,
        chain_id,
        metric,
        time_interval,
        period_start,
        "value"
    from metrics
    where metric in (
        'activeAddresses',
        'activeSenders',
        'cumulativeTxCount',
        'cumulativeAddresses',
        'cumulativeContracts',
        'cumulativeDeployers',
        'contracts',
        'deployers',
        'gasUsed',
        'txCount',
        'feesPaid'
    )
        and (not isfinite("value") or "value" <> floor("value"))
)

select * from final
order by network, chain_id, metric, time_interval, period_start
