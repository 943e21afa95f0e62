-- description: P- and X-Chain balances of each address per UTC day, from its UTXOs: what was created by the end of the day and not consumed by then.
-- unique: address, chain, asset_id, balance_day
-- not_null: network, balance_amount, count_utxos, received_amount, spent_amount
-- accepted_values: chain = p-chain | x-chain
-- column: address: an owner of the UTXOs (a UTXO owned by several addresses counts for each)
-- column: chain: p-chain or x-chain, where the UTXOs are listed
-- column: asset_id: the asset (AVAX's id for AVAX)
-- column: balance_day: the UTC day; from the day of the address's first UTXO to the day of the newest extract
-- column: network: mainnet or fuji
-- column: balance_amount: sum of the UTXOs created by the end of the day and not consumed by then, in the asset's smallest unit (nAVAX for AVAX), staked ones included
-- column: count_utxos: how many UTXOs make up balance_amount
-- column: received_amount: UTXOs created during the day
-- column: spent_amount: UTXOs consumed during the day
--
-- The day of the newest extract is as of that extract: later UTXOs of the same day are not in the lake yet.
with utxos as (
    select * from stg_utxos
),

owned as (
    select
        unnest(addresses) as address,
        chain,
        asset_id,
        network,
        amount_navax as amount,
        cast(timezone('UTC', created_at) as date) as created_day,
        cast(timezone('UTC', consumed_at) as date) as consumed_day
    from utxos
),

movements as (
    select
        address,
        chain,
        asset_id,
        created_day as movement_day,
        amount as received_amount,
        0 as spent_amount,
        1 as utxo_delta
    from owned
    union all
    select
        address,
        chain,
        asset_id,
        consumed_day as movement_day,
        0 as received_amount,
        amount as spent_amount,
        -1 as utxo_delta
    from owned
    where consumed_day is not null
),

daily_movements as (
    select
        address,
        chain,
        asset_id,
        movement_day,
        sum(received_amount) as received_amount,
        sum(spent_amount) as spent_amount,
        sum(utxo_delta) as utxo_delta
    from movements
    group by all
),

spans as (
    select
        owned.address,
        owned.chain,
        owned.asset_id,
        any_value(owned.network) as network,
        min(owned.created_day) as first_day
    from owned
    group by all
),

last_day as (
    select cast(timezone('UTC', max(extracted_at)) as date) as balance_day_max
    from utxos
),

days as (
    select
        spans.address,
        spans.chain,
        spans.asset_id,
        spans.network,
        cast(spine.day as date) as balance_day
    from spans
    cross join last_day
    cross join lateral (
        select unnest(generate_series(spans.first_day, greatest(last_day.balance_day_max, spans.first_day), interval 1 day)) as day
    ) as spine
),

final as (
    select
        days.address,
        days.chain,
        days.asset_id,
        days.balance_day,
        days.network,
        sum(coalesce(daily_movements.received_amount, 0) - coalesce(daily_movements.spent_amount, 0))
            over running as balance_amount,
        sum(coalesce(daily_movements.utxo_delta, 0)) over running as count_utxos,
        coalesce(daily_movements.received_amount, 0) as received_amount,
        coalesce(daily_movements.spent_amount, 0) as spent_amount
    from days
    left join daily_movements
        on days.address = daily_movements.address
        and days.chain = daily_movements.chain
        and days.asset_id = daily_movements.asset_id
        and days.balance_day = daily_movements.movement_day
    window running as (
        partition by days.address, days.chain, days.asset_id
        order by days.balance_day
        rows between unbounded preceding and current row
    )
)

select * from final
