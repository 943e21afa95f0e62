-- description: P- and X-Chain balances of each configured address per UTC day, from its UTXOs: what was created by the end of the day and not consumed by then.
-- unique: network, address, chain, asset_id, balance_day
-- not_null: network, balance_amount, count_utxos, received_amount, spent_amount
-- accepted_values: chain = p-chain | x-chain
-- column: address: a configured address, an owner of the UTXOs (a UTXO owned by several addresses counts for each configured one; an owner that is not configured has no row, as the lake holds only the UTXOs it shares)
-- column: chain: p-chain or x-chain, where the UTXOs are listed
-- column: asset_id: the asset (AVAX's id for AVAX)
-- column: balance_day: the UTC day; from the day of the address's first UTXO in the lake to the day its partition was last read (an address whose extract failed or stopped ends there, not at the newest extract of the others)
-- column: network: mainnet or fuji
-- column: balance_amount: sum of the UTXOs created by the end of the day and not consumed by then, in the asset's smallest unit (nAVAX for AVAX), staked ones included; those older than the lake's history (a pipeline `start`) count from address_balance_openings (one spent during the window does not: the days before its spend show that much less)
-- column: count_utxos: how many UTXOs make up balance_amount
-- column: received_amount: UTXOs created during the day
-- column: spent_amount: UTXOs consumed during the day
--
-- The last day is as of the partition's last read: later UTXOs of the same day are not in the lake yet.
-- With a pipeline `start`, the UTXOs created before it are never read; those still unspent open the
-- series (address_balance_openings, from the balances snapshot), so its last day is what the address
-- holds. Without the balances stream the series is the lake's UTXOs alone.
with utxos as (
    select * from stg_utxos
),

openings as (
    select * from address_balance_openings
    where opening_amount <> 0 or opening_utxos <> 0
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

-- Each asset's series starts on its first UTXO in the lake; one with an opening no later than the
-- address's first UTXO on that chain (its history in the lake), or on its last read if it has none.
firsts as (
    select
        network,
        address,
        chain,
        asset_id,
        min(created_day) as first_day,
        min(min(created_day)) over (partition by network, address, chain) as address_first_day
    from owned
    group by network, address, chain, asset_id
),

assets as (
    select
        coalesce(firsts.network, openings.network) as network,
        coalesce(firsts.address, openings.address) as address,
        coalesce(firsts.chain, openings.chain) as chain,
        coalesce(firsts.asset_id, openings.asset_id) as asset_id,
        case
            when openings.asset_id is null then firsts.first_day
            else coalesce(firsts.address_first_day, address_firsts.first_day)
        end as first_day
    from firsts
    full outer join openings
        on firsts.network = openings.network
        and firsts.address = openings.address
        and firsts.chain = openings.chain
        and firsts.asset_id = openings.asset_id
    left join (
        select distinct network, address, chain, address_first_day as first_day from firsts
    ) as address_firsts
        on openings.network = address_firsts.network
        and openings.address = address_firsts.address
        and openings.chain = address_firsts.chain
),

-- Only configured addresses (those with a partition), each up to the day its partition was last read.
spans as (
    select
        assets.network,
        assets.address,
        assets.chain,
        assets.asset_id,
        coalesce(assets.first_day, partitions.last_day) as first_day,
        partitions.last_day
    from assets
    inner join partitions
        on assets.network = partitions.network
        and assets.chain = partitions.chain
        and assets.address = partitions.address
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
        coalesce(openings.opening_amount, 0)
            + sum(coalesce(daily_movements.received_amount, 0) - coalesce(daily_movements.spent_amount, 0))
            over running as balance_amount,
        cast(coalesce(openings.opening_utxos, 0) + sum(coalesce(daily_movements.utxo_delta, 0)) over running as bigint)
            as count_utxos,
        coalesce(daily_movements.received_amount, 0) as received_amount,
        coalesce(daily_movements.spent_amount, 0) as spent_amount
    from days
    left join daily_movements
        on days.network = daily_movements.network
        and days.address = daily_movements.address
        and days.chain = daily_movements.chain
        and days.asset_id = daily_movements.asset_id
        and days.balance_day = daily_movements.movement_day
    left join openings
        on days.network = openings.network
        and days.address = openings.address
        and days.chain = openings.chain
        and days.asset_id = openings.asset_id
    window running as (
        partition by days.network, days.address, days.chain, days.asset_id
        order by days.balance_day
        rows between unbounded preceding and current row
    )
)

select * from final
