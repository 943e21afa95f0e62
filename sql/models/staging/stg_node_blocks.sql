-- description: One row per P-Chain block proposed by the configured validators.
-- unique: block_hash
-- incremental: true
-- not_null: node_id, network, block_number, block_timestamp, block_type, tx_count
-- column: block_hash: the block's id
-- column: node_id: the configured validator that proposed it
-- column: network: mainnet or fuji
-- column: block_number: the block's height
-- column: block_timestamp: the block's time
-- column: block_type: the block's type, as the API gives it (BanffStandardBlock, BanffProposalBlock, BanffCommitBlock, …)
-- column: parent_hash: the id of the block before it
-- column: tx_count: transactions in the block
-- column: tx_hashes: the ids of its transactions
-- column: block_size_bytes: the block's size in bytes
-- column: l1_validators_accrued_fees_navax: fees accrued by L1 validators as of the block, in nAVAX
-- column: active_l1_validators: L1 validators active as of the block
-- column: current_supply_navax: the supply as of the block, in nAVAX
-- column: proposer_id: the proposervm block id
-- column: proposer_parent_id: the proposervm parent block id
-- column: proposer_node_id: the node the proposervm header names
-- column: proposer_p_chain_height: the P-Chain height in the proposervm header
-- column: proposer_timestamp: the time in the proposervm header
-- column: extracted_at: when avalake read this version
with source as not materialized (
    select * from {{ lake('node_blocks') }}
),

newest as (
    select * from {{ newest('source', 'blockHash') }}
),

final as (
    select
        blockHash as block_hash,
        nodeId as node_id,
        network,
        blockNumber as block_number,
        blockTimestamp as block_timestamp,
        blockType as block_type,
        parentHash as parent_hash,
        txCount as tx_count,
        transactions as tx_hashes,
        blockSizeBytes as block_size_bytes,
        l1ValidatorsAccruedFees as l1_validators_accrued_fees_navax,
        activeL1Validators as active_l1_validators,
        currentSupply as current_supply_navax,
        proposerDetails.proposerId as proposer_id,
        proposerDetails.proposerParentId as proposer_parent_id,
        proposerDetails.proposerNodeId as proposer_node_id,
        proposerDetails.proposerPChainHeight as proposer_p_chain_height,
        proposerDetails.proposerTimestamp as proposer_timestamp,
        _extracted_at as extracted_at
    from newest
)

select * from final
