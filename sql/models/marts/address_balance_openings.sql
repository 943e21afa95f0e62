-- description: What each configured address held before the lake's UTXO history begins, by chain and asset: the newest balances snapshot less the lake's unspent UTXOs. It opens address_balances_daily's series.
-- unique: network, address, chain, asset_id
-- not_null: network, address, chain, asset_id, opening_amount, opening_utxos
-- compare_to_last: true
-- column: network: mainnet or fuji
-- column: address: a configured address, without its chain prefix
-- column: chain: p-chain or x-chain
-- column: asset_id: the asset (AVAX's id for AVAX)
-- column: opening_amount: the snapshot's balance less the lake's unspent UTXOs, in the asset's smallest unit: UTXOs created before the pipeline's `start` and still unspent (zero where the lake holds the whole history)
-- column: opening_utxos: how many UTXOs make up opening_amount
--
-- optional: stg_primary_balances (network varchar, chain varchar, address varchar, as_of varchar, category varchar, asset_id varchar, amount decimal(38, 0), utxo_count bigint, snapshot_at timestamptz)
--
-- A pipeline's `start` leaves older UTXOs out of the lake, and those still unspent are part of the
-- balance. The balances snapshot (as the API gives them, every category, atomic memory included) holds
-- them; the lake's own unspent UTXOs are taken off. Without that stream there is
-- no row, and the series is the UTXOs alone.
--
-- Built whole every build (the snapshot is confirmed every run, so its time moves), and compared with
-- the last build's rows: while the openings are the same, address_balances_daily is kept. The
-- snapshot's time is therefore not a column. A UTXO created or spent between a run's UTXO read and its
-- balances read is in one of the two only: the opening is off by it until the next run reads it.
with balances as (
    select * from stg_primary_balances
),

utxos as (
    select * from stg_utxos
),

-- The newest snapshot of each configured address on each chain.
newest_balances as (
    select *
    from balances
    where as_of = 'latest' and chain in ('p-chain', 'x-chain')
    qualify snapshot_at = max(snapshot_at) over (partition by network, chain, address)
),

snapshots as (
    select
        network,
        chain,
        regexp_replace(address, '^[PX]-', '') as address,
        asset_id,
        sum(amount) as amount,
        sum(utxo_count) as utxo_count
    from newest_balances
    group by all
),

-- Each UTXO once for each of its owners (a projection's unnest: a lateral join to it costs seconds).
owned as (
    select
        network,
        chain,
        asset_id,
        amount_navax as amount,
        consumed_at,
        unnest(addresses) as address
    from utxos
),

-- The lake's unspent UTXOs, as far as the lake knows. Not "at the snapshot's time": snapshot_at is when
-- avalake's run began, by its own clock, not when the balances were read, and the run reads the UTXOs
-- and the balances within minutes of each other.
unspent_in_lake as (
    select
        network,
        address,
        chain,
        asset_id,
        sum(amount) as amount,
        count(*) as utxo_count
    from owned
    where consumed_at is null
    group by all
),

final as (
    select
        network,
        address,
        chain,
        asset_id,
        snapshots.amount - coalesce(unspent_in_lake.amount, 0) as opening_amount,
        cast(snapshots.utxo_count - coalesce(unspent_in_lake.utxo_count, 0) as bigint) as opening_utxos
    from snapshots
    left join unspent_in_lake using (network, address, chain, asset_id)
)

select * from final
