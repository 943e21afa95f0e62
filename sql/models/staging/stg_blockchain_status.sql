-- description: The node's status of the P-, X- and C-Chain and of each configured L1 chain (primary.blockchains), one row per chain per snapshot.
-- unique: blockchain_id, snapshot_at
-- incremental: true
-- not_null: network, status
-- accepted_values: status = Validating | Created | Preferred | Syncing | Unknown
-- column: blockchain_id: the chain's blockchain id (the P-, X- or C-Chain's, or a configured L1 chain's)
-- column: network: mainnet or fuji
-- column: status: platform.getBlockchainStatus as the node gives it (Validating, Created, Preferred, Syncing, Unknown)
-- column: snapshot_at: when avalake observed it (one time per run)
-- column: extracted_at: when avalake wrote the row
with source as not materialized (
    select * from {{ lake('blockchain_status') }}
),

newest as (
    select * from {{ newest('source', 'blockchainId, _snapshot_at') }}
),

final as (
    select
        blockchainId as blockchain_id,
        network,
        status,
        _snapshot_at as snapshot_at,
        _extracted_at as extracted_at
    from newest
)

select * from final
