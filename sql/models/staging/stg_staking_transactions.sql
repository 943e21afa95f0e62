-- description: One row per P-Chain staking transaction of the configured addresses.
-- unique: tx_hash
-- not_null: tx_type, block_timestamp, block_number
-- column: tx_hash: the transaction's id
-- column: network: mainnet or fuji
-- column: tx_type: the transaction type, as the API gives it (AddValidatorTx, AddPermissionlessDelegatorTx, …)
-- column: block_timestamp: time of the block it is in (UTC)
-- column: block_number: height of the block it is in
-- column: block_hash: id of the block it is in
-- column: node_id: the validator the transaction adds or delegates to
-- column: subnet_id: the subnet the validation or delegation is on (the primary network's id, 111…LpoYY, for primary-network staking)
-- column: started_at: start of the staking period (UTC)
-- column: ended_at: end of the staking period (UTC)
-- column: delegation_fee_percent: of a primary-network validation: the fee it takes on delegations, in percent (null for delegations and AddSubnetValidatorTx)
-- column: estimated_reward_navax: the expected reward of the staking, in nAVAX (null when it earns none, as an AddSubnetValidatorTx)
-- column: reward_tx_hash: the RewardValidatorTx that paid it (null until the staking period has ended and been rewarded, and for an AddSubnetValidatorTx)
-- column: reward_addresses: where the reward goes
-- column: amount_staked_navax: AVAX staked by the transaction, in nAVAX (null when it stakes none, as an AddSubnetValidatorTx)
-- column: amount_burned_navax: fees burned, in nAVAX (null when the API lists no burned amount)
-- column: consumed_utxo_count: how many UTXOs the transaction spent
-- column: emitted_utxo_count: how many UTXOs the transaction created
-- column: extracted_at: when avalake read this version (UTC)
with source as not materialized (
    select * from {{ lake('staking_transactions') }}
),

newest as (
    select * from {{ newest('source', 'txHash') }}
),

final as (
    select
        txHash as tx_hash,
        network,
        txType as tx_type,
        blockTimestamp as block_timestamp,
        blockNumber as block_number,
        blockHash as block_hash,
        nodeId as node_id,
        subnetId as subnet_id,
        startTimestamp as started_at,
        endTimestamp as ended_at,
        cast(delegationFeePercent as decimal(9, 4)) as delegation_fee_percent,
        estimatedReward as estimated_reward_navax,
        rewardTxHash as reward_tx_hash,
        rewardAddresses as reward_addresses,
        list_sum([a.amount for a in amountStaked]) as amount_staked_navax,
        list_sum([a.amount for a in amountBurned]) as amount_burned_navax,
        len(consumedUtxos) as consumed_utxo_count,
        len(emittedUtxos) as emitted_utxo_count,
        _extracted_at as extracted_at
    from newest
)

select * from final
