-- description: One row per ICM (cross-chain) message of the configured addresses, as of its newest status.
-- unique: message_id
-- incremental: true
-- not_null: status, source_blockchain_id, destination_blockchain_id
-- accepted_values: status = pending | delivered | delivered_source_not_indexed
-- column: message_id: the message's id
-- column: network: mainnet or fuji
-- column: status: pending, delivered, or delivered_source_not_indexed (delivered, but its source transaction is not indexed), as last seen
-- column: icm_contract_address: the ICM (Teleporter) messenger contract that carried it
-- column: source_blockchain_id: the blockchain it was sent from
-- column: destination_blockchain_id: the blockchain it was sent to
-- column: source_evm_chain_id: the EVM chain id it was sent from
-- column: destination_evm_chain_id: the EVM chain id it was sent to
-- column: message_nonce: the message's nonce, as an exact decimal string (uint256)
-- column: from_address: the sender (lowercase)
-- column: to_address: the recipient on the destination chain (lowercase)
-- column: is_executed: whether the message was executed on the destination chain
-- column: is_receipt_delivered: whether its delivery receipt got back to the source chain
-- column: source_tx_hash: the transaction that sent it (null when the source is not indexed: delivered_source_not_indexed)
-- column: sent_at: time of the source transaction (UTC; null when the source is not indexed: delivered_source_not_indexed)
-- column: destination_tx_hash: the transaction that delivered it, null while pending
-- column: delivered_at: time of the delivery on the destination chain (UTC), null while pending
-- column: reward_token_symbol: symbol of the token the relayer is rewarded in
-- column: reward_value_exact: the relayer reward, in that token's smallest unit, as an exact decimal string (uint256)
-- column: extracted_at: when avalake read this version (UTC)
with source as not materialized (
    select * from {{ lake('icm_messages') }}
),

newest as (
    select * from {{ newest('source', 'messageId') }}
),

final as (
    select
        messageId as message_id,
        network,
        status,
        icmContractAddress as icm_contract_address,
        sourceBlockchainId as source_blockchain_id,
        destinationBlockchainId as destination_blockchain_id,
        sourceEvmChainId as source_evm_chain_id,
        destinationEvmChainId as destination_evm_chain_id,
        messageNonceExact as message_nonce,
        lower("from") as from_address,
        lower("to") as to_address,
        messageExecuted as is_executed,
        receiptDelivered as is_receipt_delivered,
        sourceTransaction.txHash as source_tx_hash,
        sourceTransaction."timestamp" as sent_at,
        destinationTransaction.txHash as destination_tx_hash,
        destinationTransaction."timestamp" as delivered_at,
        rewardDetails.symbol as reward_token_symbol,
        rewardDetails.valueExact as reward_value_exact,
        _extracted_at as extracted_at
    from newest
)

select * from final
