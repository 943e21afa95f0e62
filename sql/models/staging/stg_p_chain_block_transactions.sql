-- description: One row per transaction of the P-Chain blocks from the node (opt-in stream), its unsigned form kept as JSON text.
-- unique: tx_id
-- incremental: true
-- not_null: network, block_id, block_height, tx_index, unsigned_tx
-- column: tx_id: the transaction's id
-- column: network: mainnet or fuji
-- column: block_id: the block it is in
-- column: block_height: that block's height
-- column: block_time: that block's time (Banff blocks and later; null before)
-- column: tx_index: its position in the block
-- column: network_id: the network id in the unsigned transaction (1 mainnet, 5 fuji)
-- column: blockchain_id: the blockchain id in the unsigned transaction (the P-Chain's)
-- column: memo: the transaction's memo, hex
-- column: source_chain: the chain an ImportTx imports from
-- column: destination_chain: the chain an ExportTx exports to
-- column: subnet_id: the subnet a subnet transaction is about
-- column: unsigned_tx: the whole unsigned transaction as JSON text (its shape depends on its type)
-- column: credentials: its credentials (each a list of signatures)
-- column: extracted_at: when avalake read this version
with source as not materialized (
    select * from {{ lake('p_chain_block_transactions') }}
),

newest as (
    select * from {{ newest('source', 'txID') }}
),

final as (
    select
        txID as tx_id,
        network,
        blockID as block_id,
        blockHeight as block_height,
        blockTime as block_time,
        "index" as tx_index,
        networkID as network_id,
        blockchainID as blockchain_id,
        memo,
        sourceChain as source_chain,
        destinationChain as destination_chain,
        subnetID as subnet_id,
        unsignedTx as unsigned_tx,
        credentials,
        _extracted_at as extracted_at
    from newest
)

select * from final
