-- description: The P-Chain blocks the pipeline lists by id, from the node's platform.getBlock, one row per block per snapshot.
-- unique: block_id, snapshot_at
-- incremental: true
-- not_null: network, block_height, parent_id, tx_count
-- column: block_id: the block's id
-- column: network: mainnet or fuji
-- column: block_height: the block's height
-- column: parent_id: the id of the block before it
-- column: block_time: the block's time (Banff blocks and later; null before)
-- column: tx_count: transactions in the block
-- column: tx_ids: the ids of its transactions
-- column: snapshot_at: when avalake read it (one time per run)
-- column: extracted_at: when avalake wrote the row
with source as not materialized (
    select * from {{ lake('p_chain_blocks_by_id') }}
),

newest as (
    select * from {{ newest('source', 'blockId, _snapshot_at') }}
),

final as (
    select
        blockId as block_id,
        network,
        height as block_height,
        parentID as parent_id,
        "time" as block_time,
        txCount as tx_count,
        txIds as tx_ids,
        _snapshot_at as snapshot_at,
        _extracted_at as extracted_at
    from newest
)

select * from final
