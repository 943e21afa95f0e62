-- description: One row per P-Chain block from the node (opt-in stream: a height walk from where the first run began).
-- unique: block_height
-- incremental: true
-- not_null: block_id, network, parent_id, tx_count
-- column: block_height: the block's height
-- column: block_id: the block's id
-- column: network: mainnet or fuji
-- column: parent_id: the id of the block before it
-- column: block_time: the block's time (Banff blocks and later; null before)
-- column: tx_count: transactions in the block
-- column: tx_ids: the ids of its transactions
-- column: extracted_at: when avalake read this version
with source as not materialized (
    select * from {{ lake('p_chain_blocks') }}
),

newest as (
    select * from {{ newest('source', 'height') }}
),

final as (
    select
        height as block_height,
        id as block_id,
        network,
        parentID as parent_id,
        "time" as block_time,
        txCount as tx_count,
        txIds as tx_ids,
        _extracted_at as extracted_at
    from newest
)

select * from final
