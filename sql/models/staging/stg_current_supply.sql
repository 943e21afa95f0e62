-- description: Upper bound of the stakeable supply of the primary network and each configured subnet, one row per subnet per snapshot (a time series).
-- unique: subnet, snapshot_at
-- incremental: true
-- not_null: network, supply_navax
-- column: subnet: primary, or the subnet id asked about
-- column: network: mainnet or fuji
-- column: supply_navax: platform.getCurrentSupply: the upper bound of the supply, in nAVAX (a subnet's own unit for an elastic subnet)
-- column: p_chain_height: the P-Chain height the node read it at
-- column: snapshot_at: when avalake observed it (one time per run)
-- column: extracted_at: when avalake wrote the row
with source as not materialized (
    select * from {{ lake('current_supply') }}
),

newest as (
    select * from {{ newest('source', 'subnet, _snapshot_at') }}
),

final as (
    select
        subnet,
        network,
        supply as supply_navax,
        height as p_chain_height,
        _snapshot_at as snapshot_at,
        _extracted_at as extracted_at
    from newest
)

select * from final
