-- description: Blockchains registered on the P-Chain, as the node lists them, one row per blockchain per snapshot.
-- unique: blockchain_id, snapshot_at
-- incremental: true
-- not_null: network, blockchain_name, subnet_id, vm_id
-- column: blockchain_id: the blockchain's id
-- column: network: mainnet or fuji
-- column: blockchain_name: its name
-- column: subnet_id: the subnet that validates it
-- column: vm_id: id of its virtual machine
-- column: snapshot_at: when avalake observed it (one time per run)
-- column: extracted_at: when avalake wrote the row
with source as not materialized (
    select * from {{ lake('p_chain_blockchains') }}
),

newest as (
    select * from {{ newest('source', 'id, _snapshot_at') }}
),

final as (
    select
        id as blockchain_id,
        network,
        "name" as blockchain_name,
        subnetID as subnet_id,
        vmID as vm_id,
        _snapshot_at as snapshot_at,
        _extracted_at as extracted_at
    from newest
)

select * from final
