-- description: P- and X-Chain balances of each configured address per UTC day, from its UTXOs: what was created by the end of the day and not consumed by then.
-- unique: network, address, chain, asset_id, balance_day
-- not_null: network, balance_amount, count_utxos, received_amount, spent_amount
-- accepted_values: chain = p-chain | x-chain
-- column: address: a configured address, an owner of the UTXOs (a UTXO owned by several addresses counts for each configured one; an owner that is not configured has no row, as the lake holds only the UTXOs it shares)
-- column: chain: p-chain or x-chain, where the UTXOs are listed
-- column: asset_id: the asset (AVAX's id for AVAX)
-- column: balance_day: the UTC day; from the day of the address's first UTXO to the day its partition was last read (an address whose extract failed or stopped ends there, not at the newest extract of the others)
-- column: network: mainnet or fuji
-- column: balance_amount: sum of the UTXOs created by the end of the day and not consumed by then, in the asset's smallest unit (nAVAX for AVAX), staked ones included
-- column: count_utxos: how many UTXOs make up balance_amount
-- column: received_amount: UTXOs created during the day
-- column: spent_amount: UTXOs consumed during the day
--
-- The last day is as of the partition's last read: later UTXOs of the same day are not in the lake yet.
-- Only the UTXOs the lake holds count: with a pipeline `start`, those created before it are never read,
-- and an address still holding some shows less than it holds (README, "Daily series end there").
-- stg_primary_balances has the balances as the API gives them, each run.
with utxos as (
    select * from stg_utxos
),

partitions as (
    select
        network,
        keys['chain'] as chain,
        keys['address'] as address,
        read_day as last_day
    from partition_reads
    where stream = 'utxos'
),

owned as (
    select
        utxos.network,
        owner.address,
        utxos.chain,
        utxos.asset_id,
        utxos.amount_navax as amount,
        cast(make_timestamp(epoch_us(utxos.created_at)) as date) as created_day,
        cast(make_timestamp(epoch_us(utxos.consumed_at)) as date) as consumed_day
    from utxos
    cross join unnest(utxos.addresses) as owner(address)
),

movements as (
    select
        network,
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
        network,
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
        network,
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

-- Only configured addresses (those with a partition), each up to the day its partition was last read.
spans as (
    select
        owned.network,
        owned.address,
        owned.chain,
        owned.asset_id,
        min(owned.created_day) as first_day,
        any_value(partitions.last_day) as last_day
    from owned
    inner join partitions
        on owned.network = partitions.network
        and owned.chain = partitions.chain
        and owned.address = partitions.address
    group by all
),

days as (
    select
        spans.network,
        spans.address,
        spans.chain,
        spans.asset_id,
        cast(spine.day as date) as balance_day
    from spans
    cross join lateral (
        select unnest(generate_series(spans.first_day, greatest(spans.last_day, spans.first_day), interval 1 day)) as day
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
        cast(sum(coalesce(daily_movements.utxo_delta, 0)) over running as bigint) as count_utxos,
        coalesce(daily_movements.received_amount, 0) as received_amount,
        coalesce(daily_movements.spent_amount, 0) as spent_amount
    from days
    left join daily_movements
        on days.network = daily_movements.network
        and days.address = daily_movements.address
        and days.chain = daily_movements.chain
        and days.asset_id = daily_movements.asset_id
        and days.balance_day = daily_movements.movement_day
    window running as (
        partition by days.network, days.address, days.chain, days.asset_id
        order by days.balance_day
        rows between unbounded preceding and current row
    )
)

select * from final
