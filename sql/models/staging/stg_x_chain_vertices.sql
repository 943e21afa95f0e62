-- description: One row per X-Chain DAG vertex (opt-in stream; vertices stopped with the move to linear blocks).
-- unique: vertex_hash
-- incremental: true
-- not_null: network, vertex_height, vertex_index, vertex_timestamp, tx_count
-- column: vertex_hash: the vertex's id
-- column: network: mainnet or fuji
-- column: vertex_height: the vertex's height in the DAG
-- column: vertex_index: the vertex's index in acceptance order
-- column: vertex_timestamp: when the vertex was accepted
-- column: parent_hashes: the ids of its parent vertices
-- column: tx_count: transactions in the vertex
-- column: tx_hashes: the ids of its transactions
-- column: vertex_size_bytes: the vertex's size in bytes
-- column: extracted_at: when avalake read this version
with source as not materialized (
    select * from {{ lake('x_chain_vertices') }}
),

newest as (
    select * from {{ newest('source', 'vertexHash') }}
),

final as (
    select
        vertexHash as vertex_hash,
        network,
        vertexHeight as vertex_height,
        vertexIndex as vertex_index,
        vertexTimestamp as vertex_timestamp,
        parentHashes as parent_hashes,
        txCount as tx_count,
        transactions as tx_hashes,
        vertexSizeBytes as vertex_size_bytes,
        _extracted_at as extracted_at
    from newest
)

select * from final
